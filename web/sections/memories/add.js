// Adding a memory by hand: title, content, importance.
import { useState } from "preact/hooks";
import { ApiError, post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

const TITLE_MAX = 80;

const CONTENT_MAX = 1000;

const IMPORTANCE = [1, 2, 3, 4, 5];

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

export function AddMemory({ agentId, onAdded }) {
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
