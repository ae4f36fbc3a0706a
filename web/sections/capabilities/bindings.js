// A capability's declared tool bindings: the list, the binding form (JSON Schema as JSON) and removal.
import { useLayoutEffect, useState } from "preact/hooks";
import { del, post, put } from "../../lib/api.js";
import { confirmAction } from "../../lib/confirm.js";
import { FieldError } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { Empty, ErrorBox, focusAfterRender, useAction, useNotice } from "../../lib/ui.js";
import { capabilityErrors, invalid, schemaMessage } from "./errors.js";

export const DEFAULT_SCHEMA = '{\n  "type": "object",\n  "properties": {},\n  "additionalProperties": false\n}';

export function parseSchema(text) {
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: t("caps.schemaNotObject") };
    return { value };
  } catch (error) {
    return { error: t("caps.schemaBadJson", { message: error.message }) };
  }
}

function BindingForm({ capability, binding, onDone, onCancel }) {
  const editing = Boolean(binding);
  const [name, setName] = useState(editing ? binding.name : "");
  const [hostProfile, setHostProfile] = useState(editing ? binding.hostProfile : "");
  const [mcpServerId, setMcpServerId] = useState(editing ? binding.mcpServerId : "");
  const [mcpToolName, setMcpToolName] = useState(editing ? binding.mcpToolName : "");
  const [confirmEach, setConfirmEach] = useState(editing ? binding.requiresUserConfirmation : true);
  const [schemaText, setSchemaText] = useState(editing ? JSON.stringify(binding.inputSchema, null, 2) : DEFAULT_SCHEMA);
  const [jsonError, setJsonError] = useState("");
  const action = useAction();
  const prefix = editing ? `binding-${binding.name}` : "binding-new";
  const errors = capabilityErrors(action.error);
  const schemaErrors =
    action.error && action.error.code === "schema_not_allowed"
      ? action.error.details.errors.filter((e) => !e.binding || e.binding === name)
      : [];
  const schemaInvalid = Boolean(jsonError) || schemaErrors.length > 0 || Boolean(errors.inputSchema);

  useLayoutEffect(() => focusAfterRender(editing ? `${prefix}-host` : `${prefix}-name`), []);

  const submit = (event) => {
    event.preventDefault();
    const parsed = parseSchema(schemaText);
    setJsonError(parsed.error || "");
    if (parsed.error) {
      action.clear();
      return;
    }
    action.run(async () => {
      const body = {
        expectedVersion: capability.version,
        name,
        hostProfile,
        mcpServerId,
        mcpToolName,
        inputSchema: parsed.value,
        requiresUserConfirmation: confirmEach,
      };
      const base = `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}/tool-bindings`;
      const result = editing ? await put(`${base}/${encodeURIComponent(binding.name)}`, body) : await post(base, body);
      await onDone(result.binding, t("caps.bindingSaved", { name: result.binding.name }));
    });
  };

  const field = (key, label, value, setValue, extra = {}) => {
    const id = `${prefix}-${extra.id || key}`;
    return html`<div>
      <label for=${id}>${label}</label>
      <input id=${id} value=${value} autocomplete="off" spellcheck="false" disabled=${extra.disabled}
        ...${invalid(errors, key, id)} onInput=${(e) => setValue(e.currentTarget.value)} />
      <${FieldError} id=${`${id}-error`} messages=${errors[key]} />
    </div>`;
  };

  return html`<form class="card" onSubmit=${submit} novalidate aria-labelledby=${`${prefix}-title`}>
    <h4 id=${`${prefix}-title`}>${editing ? t("caps.bindingFormEdit", { name: binding.name }) : t("caps.bindingFormNew")}</h4>
    <div class="row">
      ${field("name", t("caps.bindingName"), name, setName, { disabled: editing })}
      ${field("hostProfile", t("caps.hostProfile"), hostProfile, setHostProfile, { id: "host" })}
      ${field("mcpServerId", t("caps.mcpServerId"), mcpServerId, setMcpServerId, { id: "server" })}
      ${field("mcpToolName", t("caps.mcpToolName"), mcpToolName, setMcpToolName, { id: "tool" })}
    </div>
    <label class="check">
      <input type="checkbox" checked=${confirmEach} onChange=${(e) => setConfirmEach(e.currentTarget.checked)} />
      ${t("caps.confirmEachRun")}
    </label>
    <label for=${`${prefix}-schema`}>${t("caps.inputSchema")}</label>
    <textarea id=${`${prefix}-schema`} class="code" rows="10" spellcheck="false" value=${schemaText}
      aria-invalid=${schemaInvalid ? "true" : undefined}
      aria-describedby=${[`${prefix}-schema-hint`, schemaInvalid && `${prefix}-schema-errors`].filter(Boolean).join(" ")}
      onInput=${(e) => setSchemaText(e.currentTarget.value)}></textarea>
    <p id=${`${prefix}-schema-hint`} class="hint">${t("caps.schemaHint")}</p>
    ${schemaInvalid &&
    html`<div id=${`${prefix}-schema-errors`} class="field-error" data-testid="schema-errors">
      ${jsonError && html`<p>${jsonError}</p>`}
      ${errors.inputSchema && html`<p>${errors.inputSchema.join(" ")}</p>`}
      ${schemaErrors.length > 0 &&
      html`<p>${t("caps.schemaErrors")}:</p>
        <ul>
          ${schemaErrors.map(
            (e) => html`<li data-testid="schema-error" data-path=${e.path}>
              <code>${e.path === "" ? t("caps.root") : e.path}</code> — ${schemaMessage(e.keyword)}
            </li>`,
          )}
        </ul>`}
    </div>`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${editing ? t("caps.saveBinding") : t("caps.addBindingSubmit")}</button>
      <button type="button" class="quiet" onClick=${onCancel}>${t("caps.cancel")}</button>
    </div>
    ${!schemaErrors.length && html`<${ErrorBox} error=${action.error} />`}
    ${schemaErrors.length > 0 && html`<p class="hint">${t("error.code")}: <code>schema_not_allowed</code></p>`}
  </form>`;
}

function BindingRow({ capability, binding, readOnly, blocked, onEdit, onRemoved }) {
  const action = useAction();
  const remove = async () => {
    action.clear();
    const asked = {
      title: t("confirm.removeBinding.title"),
      body: t("caps.confirmRemoveBinding", { name: binding.name }),
      confirm: t("caps.confirmDeleteYes"),
      keep: t("caps.confirmDeleteNo"),
    };
    if (!(await confirmAction(asked))) return;
    const done = await action.run(async () => {
      await del(
        `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}/tool-bindings/${encodeURIComponent(binding.name)}` +
          `?expectedVersion=${capability.version}`,
      );
      return true;
    });
    // Answered either way: the focus goes back to the button (or the list).
    if (done) await onRemoved(binding);
    else focusAfterRender(removeId);
  };
  const inUse = action.error && action.error.code === "binding_in_use";
  const removeId = `binding-${binding.name}-remove`;
  return html`<li class="binding" data-binding=${binding.name}>
    <div class="row">
      <span class="grow">
        <code>${binding.name}</code> · ${binding.hostProfile} · <code>${binding.mcpServerId}/${binding.mcpToolName}</code>
        ${binding.requiresUserConfirmation ? ` · ${t("caps.confirmYes")}` : ` · ${t("caps.confirmNo")}`}
      </span>
      ${!readOnly &&
      html`<button type="button" class="quiet" disabled=${blocked} aria-label=${t("caps.editBindingLabel", { name: binding.name })}
          onClick=${() => onEdit(binding)}>${t("caps.editBinding")}</button>
        <button type="button" class="danger" id=${removeId} disabled=${blocked || action.busy}
          aria-label=${t("caps.removeBindingLabel", { name: binding.name })} onClick=${remove}>
          ${t("caps.removeBinding")}
        </button>`}
    </div>
    ${inUse &&
    html`<p class="field-error" data-testid="binding-in-use">
      ${t("caps.bindingInUse", { steps: (action.error.details.steps || []).map((i) => i + 1).join(", ") })}
    </p>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

export function Bindings({ capability, dirty, onChanged }) {
  const [editing, setEditing] = useState(null); // null | "new" | a binding
  const [notice, setNotice] = useNotice();
  const readOnly = capability.status === "active";
  const count = capability.toolBindings.length;
  const done = async (binding, message) => {
    setEditing(null);
    await onChanged();
    setNotice(message);
  };
  return html`<section class="card" aria-labelledby="cap-bindings-title" data-testid="bindings">
    <div class="row">
      <h3 id="cap-bindings-title" class="grow">${t("caps.bindings")}</h3>
      <span class="meta" data-testid="binding-quota">${t("caps.bindingQuota", { n: count, max: limits().capabilityBindings })}</span>
    </div>
    <p class="hint">${t("caps.bindingsIntro")}</p>
    ${!readOnly && dirty && html`<p class="notice">${t("caps.bindingNeedsSave")}</p>`}
    ${count === 0
      ? html`<${Empty} text=${t("caps.bindingsEmpty")} />`
      : html`<ul class="plain">
          ${capability.toolBindings.map(
            (b) => html`<${BindingRow} key=${b.name} capability=${capability} binding=${b} readOnly=${readOnly}
              blocked=${dirty || editing !== null} onEdit=${setEditing}
              onRemoved=${(removed) => done(removed, t("caps.bindingRemoved", { name: removed.name }))} />`,
          )}
        </ul>`}
    <p class="hint" role="status" aria-live="polite" data-testid="binding-notice">${notice}</p>
    ${editing !== null &&
    html`<${BindingForm} key=${editing === "new" ? "new" : editing.name} capability=${capability}
      binding=${editing === "new" ? null : editing} onDone=${done} onCancel=${() => setEditing(null)} />`}
    ${!readOnly &&
    editing === null &&
    html`<button type="button" disabled=${dirty || count >= limits().capabilityBindings} onClick=${() => (setNotice(""), setEditing("new"))}>
      ${t("caps.addBinding")}
    </button>`}
  </section>`;
}
