// Hosted workflows (托管工作流): remote MCP endpoints the user registers (for example a Dify workflow published
// as an MCP server). skillcore proxies every call, so the page shows what the server pinned: the host and a
// masked URL (never the URL, never the token), the status, and the snapshot's tools, each with an enable switch
// and a requires-approval switch (PATCH under expectedVersion; a conflict re-reads and says so). A refresh that
// finds a changed tool list shows the diff and waits for the owner to accept it. A try-it form is built from a
// tool's snapshot inputSchema; a call that needs consent links to its pending approval, which is decided here.
// `#/hosted?approval=<approvalId>` brings that approval into view and focuses it.
import "./messages.js";
import { useEffect } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { browserZone, Empty, focusAfterRender, Loaded, useLoad, useNotice } from "../../lib/ui.js";
import { Approvals } from "./approvals.js";
import { EndpointCard } from "./endpoint.js";
import { RegisterForm } from "./register.js";

export default function Hosted({ ctx, route }) {
  const params = route ? route.params : new URLSearchParams();
  const target = params.get("approval") || "";
  const endpoints = useLoad(() => listAll("/hosted-endpoints"), []);
  const approvals = useLoad(() => listAll("/approvals?status=pending"), []);
  const [notice, setNotice] = useNotice();
  const zone = (ctx.profile && ctx.profile.timezone) || browserZone();

  useEffect(() => {
    // A link to an approval (from a try-it form) reads the list again: the approval is new.
    if (target) approvals.reload();
  }, [target]);

  const list = endpoints.data || [];
  const replace = (updated) =>
    endpoints.setData((old) => (old || []).map((e) => (e.endpointId === updated.endpointId ? updated : e)));
  const added = (created) => {
    setNotice("");
    endpoints.setData((old) => [...(old || []), created]);
  };
  const deleted = (endpoint) => {
    endpoints.setData((old) => (old || []).filter((e) => e.endpointId !== endpoint.endpointId));
    setNotice(t("hosted.deleted", { name: endpoint.displayName }));
    focusAfterRender("hosted-list-title");
  };
  const setCount = (n) => ctx.setNavCount && ctx.setNavCount("hosted", n);

  return html`<section aria-labelledby="hosted-title">
    <h1 id="hosted-title">${t("hosted.title")}</h1>
    <p class="hint">${t("hosted.intro")}</p>
    <${RegisterForm} count=${list.length} onRegistered=${added} />
    <h2 id="hosted-list-title" tabindex="-1">${t("hosted.list")}</h2>
    <p class="hint" role="status" aria-live="polite" data-testid="list-notice">${notice}</p>
    <${Loaded} state=${endpoints}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("hosted.empty")} />`
          : items.map(
              (endpoint) => html`<${EndpointCard} key=${endpoint.endpointId} endpoint=${endpoint} zone=${zone} onReplace=${replace}
                onDeleted=${deleted} onApprovalAsked=${() => approvals.reload()} />`,
            )}
    <//>
    <${Approvals} state=${approvals} endpoints=${list} zone=${zone} target=${target} onCount=${setCount} />
  </section>`;
}
