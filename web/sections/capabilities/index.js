// My capabilities (我的能力): the user's own `user:` capabilities, edited as a structure and never as a
// free-text prompt: display name, when-to-use phrases, objective, ordered steps (each a built-in skill or
// one of the capability's declared tool bindings, with its instruction) and completion criteria. The server
// runs its defences on every save and answers with JSON Pointer paths (`details.errors[].path`); each error
// is shown at the field it points to. Bindings carry a JSON Schema (a draft-07 subset) edited as JSON, with
// the refused keywords listed at their path. An active capability is read-only until deactivated.
import "./messages.js";
import { useState } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { Empty, focusAfterRender, formatTime, Loaded, useLoad, useNotice } from "../../lib/ui.js";
import { DraftFlow, OpenDrafts } from "./drafts.js";
import { CapabilityPanel, StatusTag } from "./panel.js";

function CapabilityCard({ capability, open, onOpen }) {
  const headingId = `cap-${capability.userCapabilityId}`;
  return html`<li class="card" aria-labelledby=${headingId} data-capability=${capability.name}>
    <div class="row">
      <h2 id=${headingId} class="grow">${capability.displayName} <code class="meta">${capability.capabilityId}</code></h2>
      <${StatusTag} status=${capability.status} />
    </div>
    <p class="meta">
      <span data-testid="version">${t("caps.version", { v: capability.version })}</span>
      · ${t("caps.steps", { n: capability.workflow.steps.length })}
      · <span data-testid="binding-count">${t("caps.bindingQuota", { n: capability.toolBindings.length, max: limits().capabilityBindings })}</span>
      · ${t("caps.updated")} ${formatTime(capability.updatedAt)}
    </p>
    <button type="button" class="quiet" aria-pressed=${open ? "true" : "false"}
      aria-label=${t("caps.openLabel", { name: capability.displayName })} onClick=${() => onOpen(capability)}>
      ${t("caps.open")}
    </button>
  </li>`;
}

async function loadAll() {
  const [capabilities, skills] = await Promise.all([listAll("/user-capabilities"), listAll("/skills")]);
  return { capabilities, skills };
}

export default function Capabilities() {
  const state = useLoad(loadAll, []);
  const [openId, setOpenId] = useState(null); // null | "new" | "talk" | a userCapabilityId
  const [notice, setNotice] = useNotice();
  const [resumed, setResumed] = useState(null); // the open draft "talk" resumes, or null for a new one
  const [draftsRead, setDraftsRead] = useState(0); // bumped to read the open drafts again
  const talk = (draft) => {
    setNotice("");
    setResumed(draft);
    setOpenId("talk");
  };
  const endTalk = () => {
    setOpenId(null);
    setResumed(null);
    setDraftsRead((n) => n + 1);
  };

  const replace = (capability) =>
    state.setData((data) => ({
      ...data,
      capabilities: data.capabilities.map((c) => (c.userCapabilityId === capability.userCapabilityId ? capability : c)),
    }));
  const created = (capability, message) => {
    state.setData((data) => ({ ...data, capabilities: [...data.capabilities, capability] }));
    setOpenId(capability.userCapabilityId);
    setNotice(message);
  };
  const deleted = (capability) => {
    state.setData((data) => ({
      ...data,
      capabilities: data.capabilities.filter((c) => c.userCapabilityId !== capability.userCapabilityId),
    }));
    setOpenId(null);
    setNotice(t("caps.deleted", { name: capability.displayName }));
    focusAfterRender("caps-title");
  };

  return html`<section aria-labelledby="caps-title">
    <div class="row">
      <h1 id="caps-title" class="grow" tabindex="-1">${t("caps.title")}</h1>
      ${state.data &&
      html`<span class="meta" data-testid="quota">${t("caps.quota", { n: state.data.capabilities.length, max: limits().capabilities })}</span>
        <button type="button" disabled=${openId === "new" || state.data.capabilities.length >= limits().capabilities}
          onClick=${() => (setNotice(""), setOpenId("new"))}>${t("caps.create")}</button>
        <button type="button" disabled=${openId === "talk" || state.data.capabilities.length >= limits().capabilities}
          onClick=${() => talk(null)}>${t("caps.talk")}</button>`}
    </div>
    <p class="hint">${t("caps.intro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="caps-notice">${notice}</p>
    <${Loaded} state=${state}>
      ${({ capabilities, skills }) => {
        const open = openId === "new" ? null : capabilities.find((c) => c.userCapabilityId === openId);
        return html`
          ${capabilities.length === 0
            ? html`<${Empty} text=${t("caps.empty")} />`
            : html`<ul class="plain" aria-labelledby="caps-title">
                ${capabilities.map(
                  (c) => html`<${CapabilityCard} key=${c.userCapabilityId} capability=${c} open=${c.userCapabilityId === openId}
                    onOpen=${(picked) => (setNotice(""), setOpenId(picked.userCapabilityId))} />`,
                )}
              </ul>`}
          ${openId === null && html`<${OpenDrafts} onResume=${talk} reloadKey=${draftsRead} />`}
          ${openId === "talk" &&
          html`<${DraftFlow} key=${resumed ? resumed.draftId : "new"} initial=${resumed} skills=${skills} onClose=${endTalk}
            onConfirmed=${(capability) => (endTalk(), created(capability, t("caps.created", { name: capability.displayName })))} />`}
          ${(openId === "new" || open) &&
          html`<${CapabilityPanel} key=${openId} capability=${open || null} skills=${skills} onChange=${replace}
            onCreated=${created} onDeleted=${deleted} onClose=${() => setOpenId(null)} />`}
        `;
      }}
    <//>
  </section>`;
}
