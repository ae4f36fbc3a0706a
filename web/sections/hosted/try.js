// Trying a tool: a form built from its input schema (lib/schema_form.js), the call, and its result or the
// approval it needs.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { fieldText } from "../../lib/errors.js";
import { fieldErrors, FieldError, focusFirstError, invalidProps } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { argumentsOf, fieldsOf, initialValues, SchemaField } from "../../lib/schema_form.js";
import { ErrorBox, newClientId, useAction } from "../../lib/ui.js";
import { domId, endpointPath, fieldOf } from "./common.js";
import { whenDecided } from "./decisions.js";

// A call's validation errors by argument field ("" for what no field owns), one sentence each: the paths are
// under the body's `arguments` ("/arguments/a", "arguments.a").
function argumentErrors(error, fields) {
  if (!error || error.code !== "validation_error") return {};
  const byField = fieldErrors(error, {
    key: (path) => {
      const name = fieldOf(String(path ?? "").replace(/^\/?(arguments[./])?/, ""));
      return fields && fields.some((f) => f.name === name) ? name : "";
    },
    message: (item) => {
      const path = String(item.path ?? "").replace(/^\/?(arguments[./])?/, "");
      return item.message ? fieldText(item) : `${item.keyword || ""} ${path}`.trim();
    },
  });
  return Object.fromEntries(Object.entries(byField).map(([name, list]) => [name, list.filter(Boolean).join(" ")]));
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
  const argId = (name) => `${prefix}-arg-${domId(name)}`;
  const fields = fieldsOf(tool.inputSchema);
  const [values, setValues] = useState(() => initialValues(fields));
  const [raw, setRaw] = useState("{}");
  const [localErrors, setLocalErrors] = useState({});
  const [result, setResult] = useState(null);
  const [approvalId, setApprovalId] = useState(null);
  const action = useAction();
  const heading = useRef(null);
  useLayoutEffect(() => heading.current && heading.current.focus(), []);

  const serverErrors = argumentErrors(action.error, fields);
  const errors = { ...serverErrors, ...localErrors };
  const needsApproval = action.error && action.error.code === "approval_required";
  const needsGrant = action.error && action.error.code === "permission_required";

  const send = (withApproval) => {
    const built = argumentsOf(fields, values, raw);
    setLocalErrors(built.errors || {});
    if (built.errors) {
      // The focus goes to the first field refused, in the form's order (the raw JSON's is "").
      const order = fields ? fields.map((field) => field.name) : [""];
      focusFirstError(built.errors, order, (name) => (name ? argId(name) : `${prefix}-raw`));
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
  // Approving the call's approval on this page sends the call again with it (the same arguments: the approval is
  // bound to them); a denial says so. The latest `send` is the one called.
  const latestSend = useRef(send);
  latestSend.current = send;
  const [decision, setDecision] = useState("");
  useEffect(() => {
    if (!approvalId) return undefined;
    setDecision("");
    return whenDecided(approvalId, (approval) => {
      if (approval.status === "approved") latestSend.current(true);
      else setDecision(t("hosted.tryDenied"));
    });
  }, [approvalId]);

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
          (field) => html`<${SchemaField} key=${field.name} field=${field} id=${argId(field.name)} value=${values[field.name]}
            error=${errors[field.name]} onValue=${(v) => setValues((old) => ({ ...old, [field.name]: v }))} />`,
        )
      : html`<label for=${`${prefix}-raw`}>${t("hosted.argumentsJson")}</label>
          <textarea id=${`${prefix}-raw`} class="code" value=${raw} onInput=${(e) => setRaw(e.currentTarget.value)} spellcheck=${false}
            ...${invalidProps(errors[""] ? [errors[""]] : null, `${prefix}-raw`, `${prefix}-raw-hint`)}></textarea>
          <p class="hint" id=${`${prefix}-raw-hint`}>${t("hosted.argumentsHint")}</p>`}
    ${fields && errors[""] ? html`<${FieldError} id=${`${prefix}-form-error`} messages=${[errors[""]]} />` : null}
    ${!fields && html`<${FieldError} id=${`${prefix}-raw-error`} messages=${errors[""] ? [errors[""]] : null} />`}
    ${decision && html`<p class="notice" role="status" data-testid="try-denied">${decision}</p>`}
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
