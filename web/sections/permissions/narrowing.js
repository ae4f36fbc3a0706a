// Finer scopes on the permissions section: what a grant is narrowed to (shown on its row), and a form that grants
// with a narrowing: only some agents (a user-wide grant), one hosted endpoint and some of its tools (the hosted
// workflows skill), and one argument constraint (a maximum, a maximum length or the allowed values). The server
// checks it all (the owner's agents and endpoints, arguments the tool declares, values within its schema) and
// answers 422 with the paths of what does not fit; the page shows that answer as it is.
import { useState } from "preact/hooks";
import { listAll, patch } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { FieldError, fieldErrors, focusFirstError, invalidProps } from "../../lib/forms.js";
import { ErrorBox } from "../../lib/ui.js";

// A refused narrowing's paths (scope.arguments[0].maximum, ...) to the form's fields; the rest under the form.
function fieldOf(path) {
  if (/^scope\.arguments\[\d+\]\.name$/.test(path)) return "name";
  if (/^scope\.arguments\[\d+\]\.tool$/.test(path)) return "tool";
  if (/^scope\.arguments\[\d+\]\.(maximum|maxLength|enum)/.test(path)) return "value";
  return "other";
}
const describe = (item, error) => (item.path ? `${item.path}: ` : "") + (item.message || error.message);

// The skills whose tools are the user's hosted endpoints (the server's "proxied" registry).
export const ENDPOINT_SKILLS = new Set(["hosted-workflows"]);

export function isNarrowed(scope) {
  return Boolean(scope && ((scope.resources && scope.resources.length) || (scope.arguments && scope.arguments.length) || scope.unreadable));
}

function constraintText(argument) {
  const name = argument.tool ? `${argument.tool}.${argument.name}` : argument.name;
  if (argument.maximum !== undefined) return t("narrow.showMaximum", { name, value: argument.maximum });
  if (argument.maxLength !== undefined) return t("narrow.showMaxLength", { name, value: argument.maxLength });
  return t("narrow.showEnum", { name, values: (argument.enum || []).map((v) => JSON.stringify(v)).join(", ") });
}

// "Limited to: agent Mika; endpoint flow (tools add); add.a ≤ 10" - one item per resource and constraint.
export function NarrowingSummary({ scope, agents, endpoints }) {
  if (!isNarrowed(scope)) return null;
  if (scope.unreadable) return html`<p class="meta notice" data-testid="grant-narrowing">${t("narrow.unreadable")}</p>`;
  const parts = (scope.resources || []).map((resource) => {
    if (resource.kind === "agent") {
      const agent = agents.find((a) => a.agentId === resource.id);
      return t("narrow.showAgent", { name: agent ? agent.name : t("perms.unknownAgent") });
    }
    const endpoint = (endpoints || []).find((e) => e.endpointId === resource.id);
    const name = endpoint ? endpoint.displayName || endpoint.name : resource.id;
    return resource.tools && resource.tools.length
      ? t("narrow.showEndpointTools", { name, tools: resource.tools.join(", ") })
      : t("narrow.showEndpoint", { name });
  });
  parts.push(...(scope.arguments || []).map(constraintText));
  return html`<p class="meta" data-testid="grant-narrowing">${t("narrow.limited")}
    <span class="narrowing">${parts.map((part, i) => html`${i ? t("narrow.separator") : ""}<span data-testid="narrowing-item">${part}</span>`)}</span></p>`;
}

// A typed value from the form's text: numbers and true/false as JSON has them, anything else as text.
function parseValue(text) {
  const value = text.trim();
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (value === "true" || value === "false") return value === "true";
  return value;
}

function numberOr(text) {
  const value = Number(text.trim());
  return text.trim() !== "" && Number.isFinite(value) ? value : text; // not a number: the server says so
}

export function NarrowingForm({ skill, permission, agentId, agents, rowId, onGrant, onDone }) {
  const userScope = agentId === "";
  const endpointSkill = ENDPOINT_SKILLS.has(skill.skillId);
  const [open, setOpen] = useState(false);
  const [endpoints, setEndpoints] = useState(null);
  const [chosenAgents, setChosenAgents] = useState([]);
  const [endpointId, setEndpointId] = useState("");
  const [tools, setTools] = useState([]);
  const [argTool, setArgTool] = useState("");
  const [argName, setArgName] = useState("");
  const [argKind, setArgKind] = useState("maximum");
  const [argValue, setArgValue] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const id = (part) => `${rowId}-narrow-${part}`;
  const errors = fieldErrors(error, { key: fieldOf, message: describe });

  const toggleOpen = async (event) => {
    const isOpen = event.currentTarget.open;
    setOpen(isOpen);
    if (isOpen && endpointSkill && endpoints === null) {
      try {
        setEndpoints(await listAll("/hosted-endpoints"));
      } catch (failure) {
        setError(failure);
      }
    }
  };
  const endpoint = (endpoints || []).find((e) => e.endpointId === endpointId);
  const endpointTools = endpoint ? endpoint.snapshot.tools.map((tool) => tool.name) : [];
  const flip = (list, value, set) => set(list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);

  const submit = async (event) => {
    event.preventDefault();
    if (busy) return;
    const scope = userScope ? { type: "user" } : { type: "agent", agentId };
    const resources = [];
    if (userScope) resources.push(...chosenAgents.map((id) => ({ kind: "agent", id })));
    if (endpointSkill && endpointId) {
      resources.push(tools.length ? { kind: "hosted_endpoint", id: endpointId, tools } : { kind: "hosted_endpoint", id: endpointId });
    }
    if (resources.length) scope.resources = resources;
    if (argName.trim()) {
      const argument = { name: argName.trim() };
      if (endpointSkill && argTool) argument.tool = argTool;
      if (argKind === "maximum") argument.maximum = numberOr(argValue);
      else if (argKind === "maxLength") argument.maxLength = numberOr(argValue);
      else argument.enum = argValue.split(",").filter((v) => v.trim() !== "").map(parseValue);
      scope.arguments = [argument];
    }
    setBusy(true);
    setError(null);
    try {
      const answer = await patch("/skills/permissions", {
        skillId: skill.skillId, permissionCode: permission.code, scope, granted: true,
      });
      onGrant(answer, endpoints);
      onDone(answer);
    } catch (failure) {
      setError(failure);
      focusFirstError(fieldErrors(failure, { key: fieldOf }), ["tool", "name", "value"], id);
    } finally {
      setBusy(false);
    }
  };

  return html`<details class="narrow" data-testid="narrow" onToggle=${toggleOpen}>
    <summary>${t("narrow.open")}</summary>
    ${open && html`<form class="narrow-form" onSubmit=${submit} aria-describedby=${id("hint")}>
      <p class="hint" id=${id("hint")}>${t("narrow.hint")}</p>
      ${userScope && agents.length > 0 && html`<fieldset class="tools" data-testid="narrow-agents">
        <legend>${t("narrow.agents")}</legend>
        ${agents.map((agent) => html`<label class="check">
          <input type="checkbox" checked=${chosenAgents.includes(agent.agentId)}
            onChange=${() => flip(chosenAgents, agent.agentId, setChosenAgents)} />
          ${agent.name}</label>`)}
      </fieldset>`}
      ${endpointSkill && html`<fieldset class="tools" data-testid="narrow-endpoint">
        <legend>${t("narrow.endpoint")}</legend>
        <label for=${id("endpoint")}>${t("narrow.endpointLabel")}</label>
        <select id=${id("endpoint")} value=${endpointId}
          onChange=${(e) => { setEndpointId(e.currentTarget.value); setTools([]); setArgTool(""); }}>
          <option value="">${t("narrow.anyEndpoint")}</option>
          ${(endpoints || []).map((e) => html`<option value=${e.endpointId}>${e.displayName || e.name}</option>`)}
        </select>
        ${endpointTools.length > 0 && html`<p class="hint">${t("narrow.toolsHint")}</p>
          ${endpointTools.map((tool) => html`<label class="check">
            <input type="checkbox" checked=${tools.includes(tool)} onChange=${() => flip(tools, tool, setTools)} />
            <code>${tool}</code></label>`)}`}
      </fieldset>`}
      <fieldset class="tools" data-testid="narrow-argument">
        <legend>${t("narrow.argument")}</legend>
        ${endpointSkill && html`<label for=${id("tool")}>${t("narrow.tool")}</label>
          <select id=${id("tool")} value=${argTool} onChange=${(e) => setArgTool(e.currentTarget.value)}
            ...${invalidProps(errors.tool, id("tool"))}>
            <option value="">—</option>
            ${endpointTools.map((tool) => html`<option value=${tool}>${tool}</option>`)}
          </select>
          <${FieldError} id=${`${id("tool")}-error`} messages=${errors.tool} />`}
        <label for=${id("name")}>${t("narrow.name")}</label>
        <input id=${id("name")} value=${argName} onInput=${(e) => setArgName(e.currentTarget.value)}
          ...${invalidProps(errors.name, id("name"))} />
        <${FieldError} id=${`${id("name")}-error`} messages=${errors.name} />
        <label for=${id("kind")}>${t("narrow.kind")}</label>
        <select id=${id("kind")} value=${argKind} onChange=${(e) => setArgKind(e.currentTarget.value)}>
          <option value="maximum">${t("narrow.kindMaximum")}</option>
          <option value="maxLength">${t("narrow.kindMaxLength")}</option>
          <option value="enum">${t("narrow.kindEnum")}</option>
        </select>
        <label for=${id("value")}>${t(argKind === "enum" ? "narrow.values" : "narrow.value")}</label>
        <input id=${id("value")} value=${argValue} onInput=${(e) => setArgValue(e.currentTarget.value)}
          ...${invalidProps(errors.value, id("value"), argKind === "enum" ? id("values-hint") : undefined)} />
        ${argKind === "enum" && html`<p class="hint" id=${id("values-hint")}>${t("narrow.valuesHint")}</p>`}
        <${FieldError} id=${`${id("value")}-error`} messages=${errors.value} />
      </fieldset>
      <button type="submit" disabled=${busy} aria-busy=${busy ? "true" : undefined}>${t("narrow.submit")}</button>
      <${ErrorBox} error=${error} />
      <${FieldError} id=${id("other-error")} messages=${errors.other} />
    </form>`}
  </details>`;
}
