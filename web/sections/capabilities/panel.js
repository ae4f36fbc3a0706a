// One capability open: the editor, its bindings, its protocol and its status actions.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { del, get, post } from "../../lib/api.js";
import { ask, confirmAction } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { ErrorBox, focusAfterRender, useAction, useNotice } from "../../lib/ui.js";
import { Bindings } from "./bindings.js";
import { CapabilityForm } from "./editor.js";
import { ProtocolView } from "./protocol.js";

export function StatusTag({ status }) {
  return html`<span class="tag status status-${status}" data-status=${status}>${t(`caps.status.${status}`)}</span>`;
}

export function CapabilityPanel({ capability, skills, onChange, onCreated, onDeleted, onClose }) {
  const [notice, setNotice] = useNotice();
  const [dirty, setDirty] = useState(false);
  const action = useAction();
  const heading = useRef(null);
  const creating = !capability;
  const active = capability && capability.status === "active";
  const path = capability && `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}`;

  useLayoutEffect(() => heading.current && heading.current.focus(), [capability && capability.userCapabilityId]);

  const reload = async () => {
    const fresh = await get(path);
    onChange(fresh);
    return fresh;
  };
  const setStatus = async (verb) => {
    if (verb === "deactivate" && !(await ask("deactivateCapability", { name: capability.displayName }))) return;
    await action.run(async () => {
      setNotice("");
      const updated = await post(`${path}/${verb}`, { expectedVersion: capability.version });
      onChange(updated);
      setNotice(t(verb === "activate" ? "caps.activated" : "caps.deactivated", { name: updated.displayName }));
      focusAfterRender(verb === "activate" ? "cap-deactivate" : "cap-activate");
    });
  };
  const remove = async () => {
    const asked = {
      title: t("confirm.deleteCapability.title"),
      body: t("caps.confirmDelete", { name: capability.displayName }),
      confirm: t("caps.confirmDeleteYes"),
      keep: t("caps.confirmDeleteNo"),
    };
    if (!(await confirmAction(asked))) return;
    await action.run(async () => {
      await del(path);
      onDeleted(capability);
    });
  };

  const title = creating
    ? t("caps.createTitle")
    : t(active ? "caps.viewTitle" : "caps.editTitle", { name: capability.displayName });

  return html`<section class="card editor" aria-labelledby="cap-editor-title" data-testid="capability-editor">
    <div class="row">
      <h2 id="cap-editor-title" class="grow" tabindex="-1" ref=${heading}>${title}</h2>
      ${capability &&
      html`<${StatusTag} status=${capability.status} />
        <span class="meta" data-testid="editor-version">${t("caps.version", { v: capability.version })}</span>
        <code class="meta">${capability.capabilityId}</code>`}
      <button type="button" class="quiet" onClick=${onClose}>${t("caps.close")}</button>
    </div>
    ${active &&
    html`<div class="notice" data-testid="read-only">
      <p id="cap-read-only">${t("caps.readOnly")}</p>
    </div>`}
    ${capability &&
    html`<div class="row actions">
      ${active
        ? html`<button type="button" id="cap-deactivate" disabled=${action.busy} aria-describedby="cap-read-only"
            onClick=${() => setStatus("deactivate")}>${t("caps.deactivate")}</button>`
        : html`<button type="button" id="cap-activate" disabled=${action.busy}
            aria-describedby=${dirty ? "cap-unsaved" : undefined} onClick=${() => setStatus("activate")}>${t("caps.activate")}</button>`}
      ${!active && dirty && html`<span id="cap-unsaved" class="hint">${t("caps.unsaved")}</span>`}
      <button type="button" class="danger" id="cap-delete" disabled=${action.busy}
        aria-label=${t("caps.deleteLabel", { name: capability.displayName })} onClick=${remove}>
        ${t("caps.delete")}
      </button>
    </div>`}
    <p class="hint" role="status" aria-live="polite" data-testid="status-notice">${notice}</p>
    <${ErrorBox} error=${action.error} />
    <${CapabilityForm} key=${capability ? capability.userCapabilityId : "new"} capability=${capability} skills=${skills}
      onDirty=${setDirty} onSaved=${onChange} onCreated=${onCreated} onReload=${reload} />
    ${capability && html`<${Bindings} capability=${capability} dirty=${dirty} onChanged=${reload} />`}
    ${capability && html`<${ProtocolView} capability=${capability} dirty=${dirty} />`}
  </section>`;
}
