// Adding a memory by hand: title, content, importance.
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { fieldText } from "../../lib/errors.js";
import { fieldErrors, FieldError, invalidProps, lastSegment } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

const IMPORTANCE = [1, 2, 3, 4, 5];

// The API's field errors (details.errors: [{path, message, type}]) by field name, in the page's words, one per field.
const memoryErrors = (error) =>
  fieldErrors(error, { key: (path) => lastSegment(path) || null, firstOnly: true, message: (item) => fieldText(item) });

export function AddMemory({ agentId, onAdded }) {
  const [title, setTitle] = useState("");
  const [content, setContent] = useState("");
  const [importance, setImportance] = useState("3");
  const action = useAction();
  const errors = memoryErrors(action.error);
  const { memoryTitle, memoryContent } = limits();
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
  return html`<form class="card" aria-labelledby="memory-add-title" onSubmit=${submit}>
    <h2 id="memory-add-title">${t("memories.addTitle")}</h2>
    <label for="memory-title">${t("memories.fieldTitle")}</label>
    <input id="memory-title" name="title" required maxlength=${memoryTitle} value=${title}
      ...${invalidProps(errors.title, "memory-title", "memory-title-count")}
      onInput=${(e) => setTitle(e.currentTarget.value)} />
    <p id="memory-title-count" class="hint">${t("memories.counter", { n: title.length, max: memoryTitle })}</p>
    <${FieldError} id="memory-title-error" messages=${errors.title} />
    <label for="memory-content">${t("memories.fieldContent")}</label>
    <textarea id="memory-content" name="content" required maxlength=${memoryContent} value=${content}
      ...${invalidProps(errors.content, "memory-content", "memory-content-count")}
      onInput=${(e) => setContent(e.currentTarget.value)}></textarea>
    <p id="memory-content-count" class="hint">${t("memories.counter", { n: content.length, max: memoryContent })}</p>
    <${FieldError} id="memory-content-error" messages=${errors.content} />
    <label for="memory-importance">${t("memories.importance")}</label>
    <select id="memory-importance" name="importance" value=${importance}
      ...${invalidProps(errors.importance, "memory-importance", "memory-importance-hint")}
      onChange=${(e) => setImportance(e.currentTarget.value)}>
      ${IMPORTANCE.map((n) => html`<option value=${String(n)}>${n}</option>`)}
    </select>
    <p id="memory-importance-hint" class="hint">${t("memories.importanceHint")}</p>
    <${FieldError} id="memory-importance-error" messages=${errors.importance} />
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("memories.adding") : t("memories.add")}</button>
    </div>
    <${ErrorBox} error=${action.error} />
  </form>`;
}
