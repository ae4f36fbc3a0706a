// What the server sends beside a reply's text (Message.card): an approval it asks for, shown with the whole
// arguments and approve / deny buttons (`POST /rpc/approvals/{id}`: HostedFunction then runs the call and posts
// its result into this conversation, which the pane reads at once), and a hosted tool's result, marked as data
// from an external service. The card's words are the page's own, in the page's language; the tool's content and
// the arguments are shown as they are, in blocks that scroll, never as Markdown.
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { register, t } from "../../lib/i18n.js";
import { ErrorBox, formatTime, useAction } from "../../lib/ui.js";

register({
  zh: {
    "card.approvalTitle": "调用 {tool} 需要你的批准",
    "card.approvalCode": "批准编号 {code} · 有效期至 {time}",
    "card.approvalArgs": "参数（完整内容）",
    "card.approvalHint": "也可以在聊天里回复“批准 {code}”或“拒绝 {code}”，或在“托管工作流”页面决定。",
    "card.approve": "批准并调用",
    "card.deny": "拒绝",
    "card.approveLabel": "批准并调用 {tool}",
    "card.denyLabel": "拒绝 {tool}",
    "card.approved": "已批准：正在调用，结果会出现在下面。",
    "card.denied": "已拒绝：没有调用。",
    "card.notPending": "这个批准已经是“{status}”状态，不能再决定。",
    "card.status.approved": "已批准",
    "card.status.denied": "已拒绝",
    "card.status.used": "已使用",
    "card.status.expired": "已过期",
    "card.resultTitle": "{tool} 的结果",
    "card.resultError": "{tool} 返回了错误",
    "card.data": "外部数据",
    "card.dataHint": "来自外部服务的数据，不是指令。",
  },
  en: {
    "card.approvalTitle": "Calling {tool} needs your approval",
    "card.approvalCode": "Approval {code} · valid until {time}",
    "card.approvalArgs": "Arguments (in full)",
    "card.approvalHint": "You can also reply “approve {code}” or “deny {code}” in the chat, or decide under Hosted workflows.",
    "card.approve": "Approve and call",
    "card.deny": "Deny",
    "card.approveLabel": "Approve and call {tool}",
    "card.denyLabel": "Deny {tool}",
    "card.approved": "Approved: calling it now; the result appears below.",
    "card.denied": "Denied: nothing was called.",
    "card.notPending": "This approval is already “{status}” and cannot be decided again.",
    "card.status.approved": "approved",
    "card.status.denied": "denied",
    "card.status.used": "used",
    "card.status.expired": "expired",
    "card.resultTitle": "Result of {tool}",
    "card.resultError": "{tool} returned an error",
    "card.data": "External data",
    "card.dataHint": "Data from an external service, not instructions.",
  },
});

const STATUSES = ["approved", "denied", "used", "expired"];

function ApprovalCard({ card, messageId, zone, onDecided }) {
  const action = useAction();
  const [said, setSaid] = useState("");
  const tool = `${card.endpointName}.${card.toolName}`;
  const id = `card-${messageId}`;
  const decide = (decision) =>
    action.run(async () => {
      try {
        await post(`/approvals/${encodeURIComponent(card.approvalId)}`, { decision });
        setSaid(t(decision === "approve" ? "card.approved" : "card.denied"));
      } catch (failure) {
        if (failure.code !== "approval_not_pending") throw failure;
        const status = failure.details.status;
        setSaid(t("card.notPending", { status: STATUSES.includes(status) ? t(`card.status.${status}`) : status || "" }));
      }
      onDecided();
    });
  return html`<section class="msg-card approval-card" aria-labelledby=${`${id}-title`} data-testid="approval-card"
    data-approval=${card.approvalId}>
    <p id=${`${id}-title`} class="msg-card-title"><strong>${t("card.approvalTitle", { tool })}</strong></p>
    <p class="meta">${t("card.approvalCode", { code: card.code, time: formatTime(card.expiresAt, zone) })}</p>
    <p class="meta" id=${`${id}-args`}>${t("card.approvalArgs")}</p>
    <pre class="protocol arguments" tabindex="0" aria-labelledby=${`${id}-args`} data-testid="card-arguments" data-user-content="">${card.arguments}</pre>
    <div class="row actions">
      <button type="button" disabled=${action.busy || Boolean(said)} aria-label=${t("card.approveLabel", { tool })}
        onClick=${() => decide("approve")}>${t("card.approve")}</button>
      <button type="button" class="danger" disabled=${action.busy || Boolean(said)} aria-label=${t("card.denyLabel", { tool })}
        onClick=${() => decide("deny")}>${t("card.deny")}</button>
    </div>
    <p class="hint">${t("card.approvalHint", { code: card.code })}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="card-status">${said}</p>
    <${ErrorBox} error=${action.error} />
  </section>`;
}

function ResultCard({ card, messageId }) {
  const tool = `${card.endpointName}.${card.toolName}`;
  const id = `card-${messageId}`;
  return html`<section class=${`msg-card result-card${card.isError ? " is-error" : ""}`} aria-labelledby=${`${id}-title`}
    data-testid="result-card" data-is-error=${card.isError ? "true" : "false"}>
    <p id=${`${id}-title`} class="msg-card-title"><strong>${t(card.isError ? "card.resultError" : "card.resultTitle", { tool })}</strong>
      ${" "}<span class="tag data-tag">${t("card.data")}</span></p>
    <p class="hint">${t("card.dataHint")}</p>
    <pre class="protocol" tabindex="0" aria-label=${t("card.resultTitle", { tool })} data-testid="card-content" data-user-content="">${card.content}</pre>
  </section>`;
}

// A known card kind as a card; an unknown one (a newer server) is left to the message's text.
export function MessageCard({ card, messageId, zone, onDecided }) {
  if (card.kind === "approval") return html`<${ApprovalCard} card=${card} messageId=${messageId} zone=${zone} onDecided=${onDecided} />`;
  if (card.kind === "hosted_result") return html`<${ResultCard} card=${card} messageId=${messageId} />`;
  return null;
}

export const KNOWN_CARDS = ["approval", "hosted_result"];
