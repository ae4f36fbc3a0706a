// An agent's memories by status, each with its forget step.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { del, listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../../lib/ui.js";

function MemoryItem({ memory, zone, onForgotten }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const confirmButton = useRef(null);
  const forgetButton = useRef(null);
  const wasConfirming = useRef(false);
  useLayoutEffect(() => {
    // Opening the confirm step puts the focus on it; closing it gives the focus back to "forget".
    if (confirming) confirmButton.current && confirmButton.current.focus();
    else if (wasConfirming.current) forgetButton.current && forgetButton.current.focus();
    wasConfirming.current = confirming;
  }, [confirming]);
  const forget = () =>
    action.run(async () => {
      const updated = await del(
        `/agents/${encodeURIComponent(memory.agentId)}/memories/${encodeURIComponent(memory.memoryId)}`,
      );
      onForgotten(updated);
    });
  const headingId = `memory-${memory.memoryId}`;
  const confirmId = `memory-confirm-${memory.memoryId}`;
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
    (confirming
      ? html`<div class="confirm" role="group" aria-labelledby=${confirmId}
          onKeyDown=${(e) => e.key === "Escape" && !action.busy && setConfirming(false)}>
          <p id=${confirmId}>${t("memories.confirmText", { title: memory.title })}</p>
          <div class="row">
            <button type="button" class="danger" ref=${confirmButton} disabled=${action.busy} onClick=${forget}>${t("memories.confirm")}</button>
            <button type="button" class="quiet" disabled=${action.busy} onClick=${() => setConfirming(false)}>${t("memories.cancel")}</button>
          </div>
        </div>`
      : html`<button type="button" class="danger" ref=${forgetButton}
          aria-label=${t("memories.forgetLabel", { title: memory.title })}
          onClick=${() => (action.clear(), setConfirming(true))}>${t("memories.forget")}</button>`)}
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
