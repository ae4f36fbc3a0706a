// Creating an agent: name and persona.
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { fieldErrors, FieldError, hasFieldErrors, invalidProps, lastSegment, useFocusFirstError } from "../../lib/forms.js";
import { fieldText } from "../../lib/errors.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

const FIELDS = ["name", "persona"];

// The API's field errors (details.errors: [{path, message, type}]) by field, one sentence each, in the page's
// language where the rule is known (required, blank, too long), else the server's own words.
function agentErrors(error, max) {
  return fieldErrors(error, {
    key: (path) => lastSegment(path) || null,
    firstOnly: true,
    message: (item) => {
      const field = lastSegment(item.path);
      if (item.type === "string_too_short" || item.type === "missing") return t("agents.fieldRequired");
      if (item.type === "string_too_long" && max[field]) return t("agents.fieldTooLong", { max: max[field] });
      if (/blank/i.test(item.message || "")) return t("agents.fieldBlank");
      return fieldText(item);
    },
  });
}

export function CreateAgent({ onCreated }) {
  const [name, setName] = useState("");
  const [persona, setPersona] = useState("");
  const action = useAction();
  const max = { name: limits().agentName, persona: limits().agentPersona };
  const errors = agentErrors(action.error, max);
  // A refused form puts the focus on the first field the server named.
  useFocusFirstError(action.error, errors, FIELDS, (field) => `agent-${field}`);

  const submit = (event) => {
    event.preventDefault();
    if (action.busy) return;
    action.run(async () => {
      const body = { name };
      if (persona) body.persona = persona;
      const agent = await post("/agents", body);
      setName("");
      setPersona("");
      await onCreated(agent);
    });
  };
  return html`<form class="card" aria-labelledby="agent-create-title" onSubmit=${submit} novalidate>
    <h2 id="agent-create-title">${t("agents.createTitle")}</h2>
    <label for="agent-name">${t("agents.name")}</label>
    <input id="agent-name" name="name" maxlength=${max.name} value=${name} autocomplete="off"
      ...${invalidProps(errors.name, "agent-name", "agent-name-count")}
      onInput=${(e) => setName(e.currentTarget.value)} />
    <p id="agent-name-count" class="hint">${t("agents.counter", { n: name.length, max: max.name })}</p>
    <${FieldError} id="agent-name-error" messages=${errors.name} />
    <label for="agent-persona">${t("agents.persona")}</label>
    <textarea id="agent-persona" name="persona" maxlength=${max.persona} value=${persona}
      ...${invalidProps(errors.persona, "agent-persona", "agent-persona-hint agent-persona-count")}
      onInput=${(e) => setPersona(e.currentTarget.value)}></textarea>
    <p id="agent-persona-hint" class="hint">${t("agents.personaHint")}</p>
    <p id="agent-persona-count" class="hint">${t("agents.counter", { n: persona.length, max: max.persona })}</p>
    <${FieldError} id="agent-persona-error" messages=${errors.persona} />
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("agents.creating") : t("agents.create")}</button>
    </div>
    ${!hasFieldErrors(errors) && html`<${ErrorBox} error=${action.error} />`}
  </form>`;
}
