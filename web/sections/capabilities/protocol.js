// The protocol the server renders from the saved capability.
import { useEffect, useState } from "preact/hooks";
import { get } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

// The protocol exactly as a host reads it. The Markdown holds the user's own texts, so it is shown as text in a
// <pre> (Preact sets text content), never parsed or inserted as HTML.
export function ProtocolView({ capability, dirty }) {
  const hosts = [...new Set(capability.toolBindings.map((b) => b.hostProfile))];
  const [host, setHost] = useState(hosts[0] || "");
  const [shown, setShown] = useState(null);
  const action = useAction();
  const render = () =>
    action.run(async () => {
      const query = new URLSearchParams({ capabilityId: capability.capabilityId, preview: "true" });
      if (host) query.set("hostProfile", host);
      setShown(await get(`/capabilities/protocol?${query}`));
    });
  // A new version or another host makes the shown protocol stale: it goes, the button renders it again.
  useEffect(() => setShown(null), [capability.version, host]);
  return html`<section class="card" aria-labelledby="cap-protocol-title" data-testid="protocol">
    <h3 id="cap-protocol-title">${t("caps.protocol")}</h3>
    <p class="hint">${t("caps.protocolIntro")}</p>
    <div class="row toolbar">
      <div>
        <label for="cap-protocol-host">${t("caps.protocolHost")}</label>
        <select id="cap-protocol-host" value=${host} onChange=${(e) => setHost(e.currentTarget.value)}>
          <option value="">${t("caps.protocolNoHost")}</option>
          ${hosts.map((h) => html`<option value=${h}>${h}</option>`)}
        </select>
      </div>
      <button type="button" disabled=${action.busy} onClick=${render}>
        ${shown ? t("caps.protocolRefresh") : t("caps.protocolShow")}
      </button>
    </div>
    ${dirty && html`<p class="hint">${t("caps.protocolUnsaved")}</p>`}
    <${ErrorBox} error=${action.error} />
    ${shown &&
    html`<p class="meta" data-testid="protocol-version">${t("caps.protocolOf", { v: shown.version })}</p>
      ${shown.missingBindings.length > 0 &&
      html`<p class="notice" data-testid="protocol-missing">${t("caps.protocolMissing", { names: shown.missingBindings.join(", ") })}</p>`}
      <pre class="protocol" data-testid="protocol-markdown" tabindex="0" aria-labelledby="cap-protocol-title">${shown.markdown}</pre>`}
  </section>`;
}
