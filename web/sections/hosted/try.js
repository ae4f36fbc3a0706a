// Trying a tool: a form built from its input schema, the call, and its result or the approval it needs.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { ErrorBox, focusAfterRender, newClientId, useAction } from "../../lib/ui.js";
import { domId, endpointPath, FieldError, fieldOf, invalidProps } from "./common.js";

function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== "null") : schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  if (["string", "number", "integer", "boolean"].includes(type)) return type;
  return "json";
}

// The fields of an object schema, or null when the whole arguments are edited as JSON.
function fieldsOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  const properties = schema.properties;
  if (!properties || typeof properties !== "object" || Object.keys(properties).length === 0) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties).map(([name, prop]) => ({
    name,
    schema: prop && typeof prop === "object" ? prop : {},
    kind: typeOf(prop && typeof prop === "object" ? prop : {}),
    required: required.has(name),
  }));
}

function initialValue(field) {
  if (field.kind === "boolean") return field.schema.default === true;
  if (field.schema.default !== undefined) {
    return field.kind === "json" ? JSON.stringify(field.schema.default, null, 2) : String(field.schema.default);
  }
  return "";
}

// {arguments} or {errors: {field: message}} from the form's values.
function argumentsOf(fields, values, raw) {
  if (!fields) {
    try {
      const parsed = JSON.parse(raw || "{}");
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { errors: { "": t("hosted.notObject") } };
      return { arguments: parsed };
    } catch (failure) {
      return { errors: { "": t("hosted.badJson", { message: failure.message }) } };
    }
  }
  const out = {};
  const errors = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === "boolean") {
      out[field.name] = Boolean(value);
      continue;
    }
    if (value === "" || value === undefined) {
      if (field.required) errors[field.name] = t("hosted.missing");
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") {
      const number = Number(value);
      if (!Number.isFinite(number)) errors[field.name] = t("hosted.notNumber");
      else if (field.kind === "integer" && !Number.isInteger(number)) errors[field.name] = t("hosted.notInteger");
      else out[field.name] = number;
    } else if (field.kind === "enum") {
      const match = field.schema.enum.find((option) => String(option) === value);
      out[field.name] = match === undefined ? value : match;
    } else if (field.kind === "json") {
      try {
        out[field.name] = JSON.parse(value);
      } catch (failure) {
        errors[field.name] = t("hosted.badJson", { message: failure.message });
      }
    } else {
      out[field.name] = value;
    }
  }
  return Object.keys(errors).length ? { errors } : { arguments: out };
}

function ArgumentField({ field, value, onValue, error, prefix }) {
  const id = `${prefix}-arg-${domId(field.name)}`;
  const description = field.schema.description || field.schema.title;
  const hint = description || field.kind === "json" ? `${id}-hint` : undefined;
  const props = invalidProps(error ? [error] : null, id, hint);
  const label = html`${field.name}${field.required && html` <span class="required" aria-hidden="true">*</span><span class="visually-hidden">${t("hosted.required")}</span>`}`;
  let input;
  if (field.kind === "boolean") {
    return html`<label class="check" for=${id}>
        <input type="checkbox" id=${id} checked=${value} onChange=${(e) => onValue(e.currentTarget.checked)} ...${props} />
        ${label}
      </label>
      ${hint && html`<p class="hint" id=${hint}>${description}</p>`}
      <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
  }
  if (field.kind === "enum") {
    input = html`<select id=${id} value=${value} onChange=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props}>
      <option value="">${t("hosted.choose")}</option>
      ${field.schema.enum.map((option) => html`<option value=${String(option)}>${String(option)}</option>`)}
    </select>`;
  } else if (field.kind === "json") {
    input = html`<textarea id=${id} class="code" value=${value} onInput=${(e) => onValue(e.currentTarget.value)} spellcheck=${false}
      aria-required=${field.required ? "true" : undefined} ...${props}></textarea>`;
  } else {
    const numeric = field.kind === "number" || field.kind === "integer";
    input = html`<input id=${id} type=${numeric ? "number" : "text"} step=${field.kind === "integer" ? "1" : numeric ? "any" : undefined}
      inputmode=${field.kind === "integer" ? "numeric" : numeric ? "decimal" : undefined} value=${value}
      onInput=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props} />`;
  }
  return html`<label for=${id}>${label}${field.kind === "json" && html` <span class="meta">(${t("hosted.jsonField")})</span>`}</label>
    ${input}
    ${hint && html`<p class="hint" id=${hint}>${[description, field.kind === "json" && t("hosted.jsonHint")].filter(Boolean).join(" ")}</p>`}
    <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
}

function CallResult({ result }) {
  return html`<div class=${`card call-result${result.isError ? " is-error" : ""}`} data-testid="call-result"
    data-is-error=${result.isError ? "true" : "false"}>
    <h4>${t("hosted.result")}</h4>
    <p class=${`status ${result.isError ? "status-failed" : "status-succeeded"}`} data-testid="call-status">
      ${result.isError ? t("hosted.resultError") : t("hosted.resultOk")}
    </p>
    <p class="meta"><span data-testid="call-duration">${t("hosted.duration", { ms: result.durationMs })}</span>
      ${" · "}${t("hosted.callId")}: <code>${result.callId}</code></p>
    <pre class="protocol" data-testid="call-content" tabindex="0">${result.content}</pre>
    ${result.structuredContent !== undefined && result.structuredContent !== null &&
    html`<details><summary>${t("hosted.structured")}</summary>
      <pre class="protocol" data-testid="call-structured">${JSON.stringify(result.structuredContent, null, 2)}</pre></details>`}
  </div>`;
}

export function TryIt({ endpoint, tool, onClose, onApprovalAsked }) {
  const prefix = domId("try", endpoint.endpointId, tool.name);
  const fields = fieldsOf(tool.inputSchema);
  const [values, setValues] = useState(() =>
    Object.fromEntries((fields || []).map((field) => [field.name, initialValue(field)])),
  );
  const [raw, setRaw] = useState("{}");
  const [localErrors, setLocalErrors] = useState({});
  const [result, setResult] = useState(null);
  const [approvalId, setApprovalId] = useState(null);
  const action = useAction();
  const heading = useRef(null);
  useLayoutEffect(() => heading.current && heading.current.focus(), []);

  const serverErrors = {};
  if (action.error && action.error.code === "validation_error" && Array.isArray(action.error.details.errors)) {
    for (const item of action.error.details.errors) {
      const path = String(item.path ?? "").replace(/^\/?(arguments[./])?/, "");
      const name = fields && fields.some((f) => f.name === fieldOf(path)) ? fieldOf(path) : "";
      serverErrors[name] = [serverErrors[name], item.message || `${item.keyword || ""} ${path}`.trim()].filter(Boolean).join(" ");
    }
  }
  const errors = { ...serverErrors, ...localErrors };
  const needsApproval = action.error && action.error.code === "approval_required";
  const needsGrant = action.error && action.error.code === "permission_required";

  const send = (withApproval) => {
    const built = argumentsOf(fields, values, raw);
    setLocalErrors(built.errors || {});
    if (built.errors) {
      const first = Object.keys(built.errors)[0];
      focusAfterRender(first ? `${prefix}-arg-${domId(first)}` : `${prefix}-raw`);
      return;
    }
    setResult(null);
    action.run(async () => {
      const body = { toolName: tool.name, arguments: built.arguments, clientCallId: newClientId() };
      if (withApproval && approvalId) body.approvalId = approvalId;
      const answer = await post(`${endpointPath(endpoint)}/calls`, body);
      setResult(answer);
      setApprovalId(null);
    });
  };
  useEffect(() => {
    if (needsApproval && action.error.details.approvalId) {
      setApprovalId(action.error.details.approvalId);
      onApprovalAsked(action.error.details.approvalId);
    }
  }, [action.error]);

  const submit = (e) => {
    e.preventDefault();
    send(false);
  };

  return html`<form class="card try-it" onSubmit=${submit} novalidate aria-labelledby=${`${prefix}-title`} data-testid="try-it"
    data-tool=${tool.name}>
    <div class="row">
      <h4 id=${`${prefix}-title`} class="grow" tabindex="-1" ref=${heading}>${t("hosted.tryTitle", { tool: tool.name })}</h4>
      <button type="button" class="quiet" onClick=${onClose}>${t("hosted.close")}</button>
    </div>
    <p class="hint">${t("hosted.tryIntro")}</p>
    ${fields
      ? fields.map(
          (field) => html`<${ArgumentField} key=${field.name} field=${field} prefix=${prefix} value=${values[field.name]}
            error=${errors[field.name]} onValue=${(v) => setValues((old) => ({ ...old, [field.name]: v }))} />`,
        )
      : html`<label for=${`${prefix}-raw`}>${t("hosted.argumentsJson")}</label>
          <textarea id=${`${prefix}-raw`} class="code" value=${raw} onInput=${(e) => setRaw(e.currentTarget.value)} spellcheck=${false}
            ...${invalidProps(errors[""] ? [errors[""]] : null, `${prefix}-raw`, `${prefix}-raw-hint`)}></textarea>
          <p class="hint" id=${`${prefix}-raw-hint`}>${t("hosted.argumentsHint")}</p>`}
    ${fields && errors[""] ? html`<${FieldError} id=${`${prefix}-form-error`} messages=${[errors[""]]} />` : null}
    ${!fields && html`<${FieldError} id=${`${prefix}-raw-error`} messages=${errors[""] ? [errors[""]] : null} />`}
    ${needsApproval &&
    html`<div class="notice" data-testid="approval-required">
      <p>${t("hosted.needsApproval")}
        ${action.error.details.approvalId &&
        html` <a href=${`#/hosted?approval=${encodeURIComponent(action.error.details.approvalId)}`} data-testid="approval-link">${t("hosted.goApproval")}</a>`}</p>
    </div>`}
    ${needsGrant &&
    html`<p class="notice" data-testid="grant-required">${t("hosted.needsGrant")}
      <a href="#/permissions?skill=hosted-workflows&permission=hosted_workflow%3Ainvoke">${t("hosted.grantLink")}</a></p>`}
    <${ErrorBox} error=${action.error && !needsApproval && action.error.code !== "validation_error" ? action.error : null} />
    ${action.error && action.error.code === "validation_error" && !Object.keys(serverErrors).length &&
    html`<${ErrorBox} error=${action.error} />`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("hosted.sending") : t("hosted.send")}</button>
      ${approvalId &&
      html`<button type="button" class="quiet" disabled=${action.busy} data-testid="send-approved" onClick=${() => send(true)}>
        ${t("hosted.sendApproved")}</button>`}
    </div>
    <div role="status" aria-live="polite">${result && html`<${CallResult} result=${result} />`}</div>
  </form>`;
}
