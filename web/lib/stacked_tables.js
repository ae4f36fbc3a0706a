// Phones: a table becomes stacked rows below 40rem (web/styles.css), each cell led by its column's name. The name
// is the column header's text, copied to the cell's `data-label` here for every table the page renders, and copied
// again when the headers change (a new language), so no section has to repeat its headers in each cell.
function label(table) {
  const head = table.tHead && table.tHead.rows[0];
  if (!head) return;
  const names = Array.from(head.cells, (cell) => cell.textContent.trim());
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      Array.from(row.cells).forEach((cell, index) => {
        const name = names[index] || "";
        if (cell.tagName === "TD" && cell.dataset.label !== name) cell.dataset.label = name;
      });
    }
  }
}

export function labelTables(root) {
  const run = () => root.querySelectorAll("table").forEach(label);
  new MutationObserver(run).observe(root, { childList: true, subtree: true, characterData: true });
  run();
}
