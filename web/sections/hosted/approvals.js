// The pending approvals of hosted calls, decided here; a linked one is brought into view and focused. Each shows
// its whole arguments as the API gives them (argumentsPreview: never cut, hidden characters already escaped), in a
// block that scrolls (pre.protocol) rather than being cut.
import { useEffect, useRef, useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, focusAfterRender, formatTime, Loaded, useAction, useNotice } from "../../lib/ui.js";
import { domId } from "./common.js";
import { announceDecision } from "./decisions.js";

function ApprovalItem({ approval, endpoints, zone, highlighted, onDecided, onGone }) {
  const action = useAction();
  const [gone, setGone] = useState(null);
  const endpoint = endpoints.find((e) => e.endpointId === approval.endpointId);
  const endpointName = endpoint ? endpoint.displayName : t("hosted.unknownEndpoint");
  const itemId = domId("approval", approval.approvalId);
  const decide = (decision) =>
    action.run(async () => {
      try {
        const decided = await post(`/approvals/${encodeURIComponent(approval.approvalId)}`, { decision });
        announceDecision(decided); // a try-it form waiting on it sends its call again (try.js)
        onDecided(decided, t(decision === "approve" ? "hosted.approvedNow" : "hosted.deniedNow", { tool: approval.toolName }));
      } catch (failure) {
        if (failure.code === "approval_not_pending") {
          const status = failure.details.status;
          const word = status ? t(`hosted.approvalStatus.${status}`) : "";
          setGone(t("hosted.notPending", { status: word }));
          onGone(t("hosted.notPending", { status: word }));
          return;
        }
        throw failure;
      }
    });
  return html`<li class=${`card approval${highlighted ? " highlight" : ""}`} id=${itemId} data-approval=${approval.approvalId}
    aria-labelledby=${`${itemId}-title`} tabindex="-1">
    <h3 id=${`${itemId}-title`}><code data-testid="approval-tool">${approval.toolName}</code>
      <span class="meta"> · ${t("hosted.approvalEndpoint")}: <span data-testid="approval-endpoint">${endpointName}</span></span></h3>
    <dl class="facts">
      <dt>${t("hosted.approvalAsked")}</dt><dd>${formatTime(approval.createdAt, zone)}</dd>
      <dt>${t("hosted.approvalExpires")}</dt><dd data-testid="approval-expires">${formatTime(approval.expiresAt, zone)}</dd>
    </dl>
    <p class="meta" id=${`${itemId}-args-label`}>${t("hosted.approvalArgs")}</p>
    <p class="hint" id=${`${itemId}-args-hint`}>${t("hosted.approvalArgsHint")}</p>
    <pre class="protocol arguments" data-testid="approval-preview" aria-labelledby=${`${itemId}-args-label`}
      aria-describedby=${`${itemId}-args-hint`} tabindex="0">${approval.argumentsPreview}</pre>
    <div class="row actions">
      <button type="button" data-decision="approve" disabled=${action.busy || gone}
        aria-label=${t("hosted.approveLabel", { tool: approval.toolName, endpoint: endpointName })} onClick=${() => decide("approve")}>${t("hosted.approve")}</button>
      <button type="button" class="danger" data-decision="deny" disabled=${action.busy || gone}
        aria-label=${t("hosted.denyLabel", { tool: approval.toolName, endpoint: endpointName })} onClick=${() => decide("deny")}>${t("hosted.deny")}</button>
    </div>
    ${gone && html`<p class="notice" role="alert" data-testid="approval-gone">${gone}</p>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

export function Approvals({ state, endpoints, zone, target, onCount }) {
  const [notice, setNotice] = useNotice();
  const focused = useRef("");
  const items = state.data || [];
  useEffect(() => {
    if (state.status === "ready") onCount(items.length);
  }, [state.status, items.length]);
  useEffect(() => {
    if (state.status !== "ready" || !target || focused.current === target) return;
    const element = document.getElementById(domId("approval", target));
    if (!element) return;
    focused.current = target;
    element.scrollIntoView({ block: "center" });
    element.focus({ preventScroll: true });
  }, [state.status, target, items.length]);

  const decided = (approval, message) => {
    setNotice(message);
    state.setData((old) => (old || []).filter((a) => a.approvalId !== approval.approvalId));
    focusAfterRender("hosted-approvals-title");
  };
  const gone = () => {
    // The item stays until the reload answers, so its explanation is read first.
    setTimeout(state.reload, 1500);
  };

  return html`<section class="card" aria-labelledby="hosted-approvals-title" data-testid="approvals">
    <div class="row">
      <h2 id="hosted-approvals-title" class="grow" tabindex="-1">${t("hosted.approvals")}
        ${state.status === "ready" && items.length > 0 && html` <span class="badge" data-testid="approvals-count">${items.length}</span>`}</h2>
      <button type="button" class="quiet" onClick=${state.reload}>${t("hosted.approvalsReload")}</button>
    </div>
    <p class="hint">${t("hosted.approvalsIntro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="approvals-notice">${notice}</p>
    <${Loaded} state=${state}>
      ${(list) =>
        list.length === 0
          ? html`<${Empty} text=${t("hosted.approvalsEmpty")} />`
          : html`<ul class="plain">
              ${list.map(
                (approval) => html`<${ApprovalItem} key=${approval.approvalId} approval=${approval} endpoints=${endpoints} zone=${zone}
                  highlighted=${approval.approvalId === target} onDecided=${decided} onGone=${gone} />`,
              )}
            </ul>`}
    <//>
  </section>`;
}
