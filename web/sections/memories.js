// Memories (记忆): one agent's memories, active or forgotten; add one; forget one (after a confirm step
// in the page, keyboard-operable, instead of window.confirm, which screen readers and tests handle badly).
// A forgotten memory is never recalled or injected again; it stays listed under "forgotten".
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, del, listAll, post } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { AgentSelect, Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../lib/ui.js";

const TITLE_MAX = 80;
const CONTENT_MAX = 1000;
const IMPORTANCE = [1, 2, 3, 4, 5];

register({
  zh: {
    "memories.title": "记忆",
    "memories.intro": "每个 Agent 有自己的记忆。遗忘的记忆不会再被回忆或注入对话，但仍列在“已遗忘”中。",
    "memories.noAgents": "还没有 Agent，记忆属于某个 Agent。",
    "memories.createAgent": "先创建一个 Agent",
    "memories.agent": "Agent",
    "memories.filter": "显示",
    "memories.status.active": "有效",
    "memories.status.forgotten": "已遗忘",
    "memories.listTitle": "记忆列表",
    "memories.emptyActive": "这个 Agent 还没有有效的记忆。",
    "memories.emptyForgotten": "这个 Agent 没有已遗忘的记忆。",
    "memories.importance": "重要度",
    "memories.importanceOf": "重要度 {n}/5",
    "memories.source": "来源",
    "memories.source.user": "用户添加",
    "memories.source.automation": "自动整理",
    "memories.created": "创建于",
    "memories.updated": "更新于",
    "memories.forget": "遗忘",
    "memories.forgetLabel": "遗忘“{title}”",
    "memories.confirmText": "确定遗忘“{title}”吗？遗忘后它不会再被回忆。",
    "memories.confirm": "确认遗忘",
    "memories.cancel": "取消",
    "memories.forgotten": "已遗忘“{title}”。",
    "memories.addTitle": "添加记忆",
    "memories.fieldTitle": "标题",
    "memories.fieldContent": "内容",
    "memories.counter": "{n}/{max} 字",
    "memories.importanceHint": "1 最低，5 最高；默认 3。",
    "memories.add": "添加",
    "memories.adding": "添加中…",
    "memories.added": "已添加“{title}”。",
  },
  en: {
    "memories.title": "Memories",
    "memories.intro": "Each agent has its own memories. A forgotten memory is never recalled or injected again; it stays listed under Forgotten.",
    "memories.noAgents": "There is no agent yet; memories belong to an agent.",
    "memories.createAgent": "Create an agent first",
    "memories.agent": "Agent",
    "memories.filter": "Show",
    "memories.status.active": "Active",
    "memories.status.forgotten": "Forgotten",
    "memories.listTitle": "Memory list",
    "memories.emptyActive": "This agent has no active memory.",
    "memories.emptyForgotten": "This agent has no forgotten memory.",
    "memories.importance": "Importance",
    "memories.importanceOf": "Importance {n}/5",
    "memories.source": "Source",
    "memories.source.user": "Added by the user",
    "memories.source.automation": "Automation",
    "memories.created": "Created",
    "memories.updated": "Updated",
    "memories.forget": "Forget",
    "memories.forgetLabel": "Forget “{title}”",
    "memories.confirmText": "Forget “{title}”? It will never be recalled again.",
    "memories.confirm": "Forget it",
    "memories.cancel": "Cancel",
    "memories.forgotten": "“{title}” is forgotten.",
    "memories.addTitle": "Add a memory",
    "memories.fieldTitle": "Title",
    "memories.fieldContent": "Content",
    "memories.counter": "{n}/{max} characters",
    "memories.importanceHint": "1 is the lowest, 5 the highest; 3 by default.",
    "memories.add": "Add",
    "memories.adding": "Adding…",
    "memories.added": "“{title}” is added.",
  },
});

// The API's field errors (details.errors: [{path, message}]) by field name, for messages next to fields.
function fieldErrors(error) {
  const byField = {};
  if (!(error instanceof ApiError)) return byField;
  for (const item of error.details.errors || []) {
    const field = String(item.path || "").split(".").pop();
    if (field && !byField[field]) byField[field] = item.message;
  }
  return byField;
}

function AddMemory({ agentId, onAdded }) {
  const [title, setTitle] = useState("");
  const [content, setContent] = useState("");
  const [importance, setImportance] = useState("3");
  const action = useAction();
  const errors = fieldErrors(action.error);
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const created = await post(`/agents/${encodeURIComponent(agentId)}/memories`, {
        title,
        content,
        importance: Number(importance),
      });
      setTitle("");
      setContent("");
      setImportance("3");
      onAdded(created);
    });
  };
  const described = (field, hint) => [hint, errors[field] && `memory-${field}-error`].filter(Boolean).join(" ");
  return html`<form class="card" aria-labelledby="memory-add-title" onSubmit=${submit}>
    <h2 id="memory-add-title">${t("memories.addTitle")}</h2>
    <label for="memory-title">${t("memories.fieldTitle")}</label>
    <input id="memory-title" name="title" required maxlength=${TITLE_MAX} value=${title}
      aria-invalid=${errors.title ? "true" : undefined} aria-describedby=${described("title", "memory-title-count")}
      onInput=${(e) => setTitle(e.currentTarget.value)} />
    <p id="memory-title-count" class="hint">${t("memories.counter", { n: title.length, max: TITLE_MAX })}</p>
    ${errors.title && html`<p id="memory-title-error" class="field-error">${errors.title}</p>`}
    <label for="memory-content">${t("memories.fieldContent")}</label>
    <textarea id="memory-content" name="content" required maxlength=${CONTENT_MAX} value=${content}
      aria-invalid=${errors.content ? "true" : undefined} aria-describedby=${described("content", "memory-content-count")}
      onInput=${(e) => setContent(e.currentTarget.value)}></textarea>
    <p id="memory-content-count" class="hint">${t("memories.counter", { n: content.length, max: CONTENT_MAX })}</p>
    ${errors.content && html`<p id="memory-content-error" class="field-error">${errors.content}</p>`}
    <label for="memory-importance">${t("memories.importance")}</label>
    <select id="memory-importance" name="importance" value=${importance}
      aria-invalid=${errors.importance ? "true" : undefined} aria-describedby=${described("importance", "memory-importance-hint")}
      onChange=${(e) => setImportance(e.currentTarget.value)}>
      ${IMPORTANCE.map((n) => html`<option value=${String(n)}>${n}</option>`)}
    </select>
    <p id="memory-importance-hint" class="hint">${t("memories.importanceHint")}</p>
    ${errors.importance && html`<p id="memory-importance-error" class="field-error">${errors.importance}</p>`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("memories.adding") : t("memories.add")}</button>
    </div>
    <${ErrorBox} error=${action.error} />
  </form>`;
}

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

function MemoryList({ agentId, status, zone, onForgotten }) {
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

export default function Memories({ ctx, route }) {
  const agents = ctx.agents;
  const wanted = route.params.get("agent");
  const initial = agents.some((a) => a.agentId === wanted) ? wanted : agents[0] && agents[0].agentId;
  const [agentId, setAgentId] = useState(initial);
  const [status, setStatus] = useState("active");
  const [message, setMessage] = useState("");
  // Bumped after an add, so the active list reloads with the new memory in the server's order.
  const [generation, setGeneration] = useState(0);
  const zone = ctx.profile.timezone;

  if (agents.length === 0) {
    return html`<section aria-labelledby="memories-title">
      <h1 id="memories-title">${t("memories.title")}</h1>
      <p class="state empty">${t("memories.noAgents")} <a href="#/agents">${t("memories.createAgent")}</a></p>
    </section>`;
  }
  const current = agents.some((a) => a.agentId === agentId) ? agentId : agents[0].agentId;
  const choose = (value) => {
    setAgentId(value);
    setMessage("");
  };
  return html`<section aria-labelledby="memories-title">
    <h1 id="memories-title">${t("memories.title")}</h1>
    <p class="hint">${t("memories.intro")}</p>
    <div class="row toolbar">
      <div>
        <${AgentSelect} id="memories-agent" agents=${agents} value=${current} onChange=${choose} label=${t("memories.agent")} />
      </div>
      <fieldset class="segmented">
        <legend>${t("memories.filter")}</legend>
        ${["active", "forgotten"].map(
          (value) => html`<label class="check">
            <input type="radio" name="memory-status" value=${value} checked=${status === value}
              onChange=${() => (setStatus(value), setMessage(""))} />
            ${t(`memories.status.${value}`)}
          </label>`,
        )}
      </fieldset>
    </div>
    <p class="hint" role="status" aria-live="polite" data-testid="memories-status">${message}</p>
    <h2>${t(`memories.status.${status}`)}</h2>
    <${MemoryList}
      key=${`${current}/${status}/${generation}`}
      agentId=${current}
      status=${status}
      zone=${zone}
      onForgotten=${(memory) => setMessage(t("memories.forgotten", { title: memory.title }))}
    />
    <${AddMemory}
      key=${current}
      agentId=${current}
      onAdded=${(memory) => {
        setMessage(t("memories.added", { title: memory.title }));
        if (status === "active") setGeneration((n) => n + 1);
      }}
    />
  </section>`;
}
