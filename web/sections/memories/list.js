// An agent's memories by status, each with its forget step.
import { del, listAll } from "../../lib/api.js";
import { confirmAction } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../../lib/ui.js";

function MemoryItem({ memory, zone, onForgotten }) {
  const action = useAction();
  const forget = async () => {
    action.clear();
    const asked = {
      title: t("confirm.forgetMemory.title"),
      body: t("memories.confirmText", { title: memory.title }),
      confirm: t("memories.confirm"),
      keep: t("memories.cancel"),
    };
    if (!(await confirmAction(asked))) return;
    await action.run(async () => {
      const updated = await del(
        `/agents/${encodeURIComponent(memory.agentId)}/memories/${encodeURIComponent(memory.memoryId)}`,
      );
      onForgotten(updated);
    });
  };
  const headingId = `memory-${memory.memoryId}`;
  return html`<li class="card" aria-labelledby=${headingId} data-memory=${memory.memoryId}>
    <div class="row">
      <h3 id=${headingId} class="grow">${memory.title}</h3>
      <span class="tag">${t("memories.importanceOf", { n: memory.importance })}</span>
      <span class="tag">${t(`memories.source.${memory.source}`)}</span>
    </div>
    <p class="memory-content">${memory.content}</p>
    <p class="meta">
      ${t("memories.created")}: ${formatTime(memory.createdAt, zone)} · ${t("memories.updated")}: ${formatTime(memory.updatedAt, zone)}
    </p>
    ${memory.status === "active" &&
    html`<button type="button" class="danger" disabled=${action.busy}
      aria-label=${t("memories.forgetLabel", { title: memory.title })} onClick=${forget}>${t("memories.forget")}</button>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

export function MemoryList({ agentId, status, zone, onForgotten }) {
  const list = useLoad(
    () => listAll(`/agents/${encodeURIComponent(agentId)}/memories?status=${status}`),
    [agentId, status],
  );
  const forgotten = (memory) => {
    // The memory leaves the active list; the forgotten list loads it fresh when shown.
    list.setData((items) => items.filter((m) => m.memoryId !== memory.memoryId));
    onForgotten(memory);
  };
  return html`<${Loaded} state=${list}>
    ${(items) =>
      items.length === 0
        ? html`<${Empty} text=${t(status === "active" ? "memories.emptyActive" : "memories.emptyForgotten")} />`
        : html`<ul class="plain" aria-label=${t("memories.listTitle")}>
            ${items.map(
              (memory) =>
                html`<${MemoryItem} key=${memory.memoryId} memory=${memory} zone=${zone} onForgotten=${forgotten} />`,
            )}
          </ul>`}
  <//>`;
}
