// Creating an agent: name and persona.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

const NAME_MAX = 40;

const PERSONA_MAX = 2000;

// The API's field errors (details.errors: [{path, message, type}]) by field, in the page's language where the
// rule is known (required, blank, too long), else the server's own words.
function fieldErrors(error, limits) {
  const byField = {};
  if (!(error instanceof ApiError)) return byField;
  for (const item of error.details.errors || []) {
    const field = String(item.path || "").split(".").pop();
    if (!field || byField[field]) continue;
    if (item.type === "string_too_short" || item.type === "missing") byField[field] = t("agents.fieldRequired");
    else if (item.type === "string_too_long" && limits[field]) byField[field] = t("agents.fieldTooLong", { max: limits[field] });
    else if (/blank/i.test(item.message || "")) byField[field] = t("agents.fieldBlank");
    else byField[field] = item.message;
  }
  return byField;
}

export function CreateAgent({ onCreated }) {
  const [name, setName] = useState("");
  const [persona, setPersona] = useState("");
  const action = useAction();
  const nameInput = useRef(null);
  const personaInput = useRef(null);
  const errors = fieldErrors(action.error, { name: NAME_MAX, persona: PERSONA_MAX });
  const hasFieldErrors = Object.keys(errors).length > 0;

  useLayoutEffect(() => {
    // A refused form puts the focus on the first field the server named.
    if (errors.name) nameInput.current && nameInput.current.focus();
    else if (errors.persona) personaInput.current && personaInput.current.focus();
  }, [action.error]);

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
  const described = (field, hint) => [hint, errors[field] && `agent-${field}-error`].filter(Boolean).join(" ");
  return html`<form class="card" aria-labelledby="agent-create-title" onSubmit=${submit} novalidate>
    <h2 id="agent-create-title">${t("agents.createTitle")}</h2>
    <label for="agent-name">${t("agents.name")}</label>
    <input id="agent-name" name="name" maxlength=${NAME_MAX} value=${name} ref=${nameInput} autocomplete="off"
      aria-invalid=${errors.name ? "true" : undefined} aria-describedby=${described("name", "agent-name-count")}
      onInput=${(e) => setName(e.currentTarget.value)} />
    <p id="agent-name-count" class="hint">${t("agents.counter", { n: name.length, max: NAME_MAX })}</p>
    ${errors.name && html`<p id="agent-name-error" class="field-error">${errors.name}</p>`}
    <label for="agent-persona">${t("agents.persona")}</label>
    <textarea id="agent-persona" name="persona" maxlength=${PERSONA_MAX} value=${persona} ref=${personaInput}
      aria-invalid=${errors.persona ? "true" : undefined}
      aria-describedby=${described("persona", "agent-persona-hint agent-persona-count")}
      onInput=${(e) => setPersona(e.currentTarget.value)}></textarea>
    <p id="agent-persona-hint" class="hint">${t("agents.personaHint")}</p>
    <p id="agent-persona-count" class="hint">${t("agents.counter", { n: persona.length, max: PERSONA_MAX })}</p>
    ${errors.persona && html`<p id="agent-persona-error" class="field-error">${errors.persona}</p>`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("agents.creating") : t("agents.create")}</button>
    </div>
    ${!hasFieldErrors && html`<${ErrorBox} error=${action.error} />`}
  </form>`;
}
