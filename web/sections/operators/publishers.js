// Publishers: register one (id, name, the submitting account, trust level, first public key), rotate a key
// (add one, optionally revoking the others), revoke a key. Each is an operator's decision (a person's token).
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, Loaded, useAction } from "../../lib/ui.js";

function Register({ onDone }) {
  const action = useAction();
  const [form, setForm] = useState({ publisherId: "", displayName: "", userId: "", trustLevel: "community", publicKey: "" });
  const field = (name) => (event) => setForm({ ...form, [name]: event.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const created = await post("/admin/publishers", form);
      setForm({ publisherId: "", displayName: "", userId: "", trustLevel: "community", publicKey: "" });
      onDone(t("operators.registered", { id: created.publisherId }));
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="operators-register-title">
    <h3 id="operators-register-title">${t("operators.register")}</h3>
    <label for="op-publisher-id">${t("operators.publisherId")}</label>
    <input id="op-publisher-id" required value=${form.publisherId} onInput=${field("publisherId")} aria-describedby="op-publisher-id-hint" />
    <p class="hint" id="op-publisher-id-hint">${t("operators.publisherIdHint")}</p>
    <label for="op-display-name">${t("operators.displayName")}</label>
    <input id="op-display-name" required value=${form.displayName} onInput=${field("displayName")} />
    <label for="op-user-id">${t("operators.userId")}</label>
    <input id="op-user-id" required value=${form.userId} onInput=${field("userId")} />
    <label for="op-trust">${t("operators.trustLevel")}</label>
    <select id="op-trust" value=${form.trustLevel} onChange=${field("trustLevel")}>
      ${["community", "verified_publisher"].map((level) => html`<option value=${level}>${t(`operators.trust.${level}`)}</option>`)}
    </select>
    <label for="op-public-key">${t("operators.publicKey")}</label>
    <textarea id="op-public-key" required rows="4" value=${form.publicKey} onInput=${field("publicKey")}></textarea>
    <${ErrorBox} error=${action.error} />
    <button type="submit" disabled=${action.busy}>${t("operators.registerSubmit")}</button>
  </form>`;
}

function Rotate({ publisher, onDone }) {
  const action = useAction();
  const [key, setKey] = useState("");
  const [revokeOthers, setRevokeOthers] = useState(false);
  const id = `op-rotate-${publisher.publisherId}`;
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const after = await post(`/admin/publishers/${encodeURIComponent(publisher.publisherId)}/keys`, { publicKey: key, revokeOthers });
      setKey("");
      onDone(after, t("operators.rotated", { id: publisher.publisherId }));
    });
  };
  return html`<form onSubmit=${submit} class="rotate">
    <label for=${id}>${t("operators.newKey")}</label>
    <textarea id=${id} required rows="3" value=${key} onInput=${(e) => setKey(e.currentTarget.value)}></textarea>
    <label class="check"><input type="checkbox" checked=${revokeOthers} onChange=${(e) => setRevokeOthers(e.currentTarget.checked)} />
      ${t("operators.revokeOthers")}</label>
    <${ErrorBox} error=${action.error} />
    <button type="submit" disabled=${action.busy}>${t("operators.rotateSubmit")}</button>
  </form>`;
}

function PublisherItem({ publisher, onChanged }) {
  const action = useAction();
  const revoke = (keyId) =>
    action.run(async () => {
      const after = await post(`/admin/publishers/${encodeURIComponent(publisher.publisherId)}/keys/${keyId}/revoke`);
      onChanged(after, t("operators.revoked", { key: keyId }));
    });
  return html`<li class="card" data-publisher=${publisher.publisherId}>
    <h3><code>${publisher.publisherId}</code> <span class="meta">· ${publisher.displayName} · ${t(`operators.trust.${publisher.trustLevel}`)}</span></h3>
    <p class="meta">${t("operators.userId")}: <code>${publisher.userId}</code></p>
    <h4>${t("operators.keys")}</h4>
    <ul class="plain">
      ${publisher.keys.map(
        (key) => html`<li data-key=${key.keyId} data-status=${key.status}><code>${key.keyId}</code> · ${t(`operators.key.${key.status}`)}
          ${key.status === "active" &&
          html` <button type="button" class="danger" disabled=${action.busy} aria-label=${t("operators.revokeLabel", { key: key.keyId })}
            onClick=${() => revoke(key.keyId)}>${t("operators.revoke")}</button>`}</li>`,
      )}
    </ul>
    <${ErrorBox} error=${action.error} />
    <details><summary>${t("operators.rotate")}</summary><${Rotate} publisher=${publisher} onDone=${onChanged} /></details>
  </li>`;
}

export function Publishers({ state, onMessage }) {
  const replace = (after, message) => {
    state.setData((items) => items.map((p) => (p.publisherId === after.publisherId ? after : p)));
    onMessage(message);
  };
  return html`<section aria-labelledby="operators-publishers-title">
    <h2 id="operators-publishers-title">${t("operators.publishers")}</h2>
    <${Loaded} state=${state}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("operators.noPublishers")} />`
          : html`<ul class="plain" data-testid="publishers">${items.map((p) => html`<${PublisherItem} key=${p.publisherId} publisher=${p} onChanged=${replace} />`)}</ul>`}
    <//>
    <${Register} onDone=${(message) => (state.reload(), onMessage(message))} />
  </section>`;
}
