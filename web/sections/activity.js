// Activity (活动): the user's recent runs, their audit trail, and the evaluation summary (评测摘要).
// Runs and audit events hold no text (no message, memory or note): codes, ids, counts and times only, so
// that is all there is to show. The evaluation summary is data shipped with the page (web/data/evals.json,
// written by `make evals`), fetched only when this section opens.
import { useState } from "preact/hooks";
import { ApiError, get } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../lib/ui.js";

const PAGE_SIZE = 20;
const ACTIONS = [
  "permission.grant",
  "permission.revoke",
  "tool.execute",
  "background.create",
  "background.execute",
  "background.cancel",
  "automation.execute",
];

register({
  zh: {
    "activity.title": "活动",
    "activity.intro": "运行记录和审计记录只保存代码、编号、计数和时间，不保存任何消息、记忆或备注的文字。",
    "activity.refresh": "刷新",
    "activity.more": "加载更多",
    "activity.loadingMore": "加载中…",
    "activity.runs": "最近运行",
    "activity.runsTable": "最近运行记录",
    "activity.runsEmpty": "还没有运行记录。发一条聊天消息后这里会出现。",
    "activity.audit": "审计记录",
    "activity.auditTable": "审计记录列表",
    "activity.auditEmpty": "还没有审计记录。授予或撤销权限、执行工具或后台任务时会记录。",
    "activity.col.time": "时间",
    "activity.col.kind": "类型",
    "activity.col.skill": "技能",
    "activity.col.outcome": "结果",
    "activity.col.duration": "耗时",
    "activity.col.memories": "使用记忆",
    "activity.col.conversation": "会话",
    "activity.col.action": "动作",
    "activity.col.decision": "决定",
    "activity.col.scope": "范围",
    "activity.col.reason": "原因代码",
    "activity.ms": "{n} 毫秒",
    "activity.none": "—",
    "activity.kind.workflow": "工作流",
    "activity.kind.tool": "工具",
    "activity.kind.prompt": "提示词",
    "activity.kind.plain": "普通回复",
    "activity.outcome.succeeded": "成功",
    "activity.outcome.denied": "被拒绝",
    "activity.outcome.degraded": "降级",
    "activity.outcome.failed": "失败",
    "activity.action.permission.grant": "授予权限",
    "activity.action.permission.revoke": "撤销权限",
    "activity.action.tool.execute": "执行工具",
    "activity.action.background.create": "创建后台任务",
    "activity.action.background.execute": "执行后台任务",
    "activity.action.background.cancel": "取消后台任务",
    "activity.action.automation.execute": "执行自动化任务",
    "activity.decision.allowed": "允许",
    "activity.decision.denied": "拒绝",
    "activity.decision.succeeded": "成功",
    "activity.decision.failed": "失败",
    "activity.decision.cancelled": "已取消",
    "activity.scope.user": "用户",
    "activity.scope.agent": "Agent {id}",
    "activity.evals": "评测摘要",
    "activity.evalsIntro": "选择器在 {cases} 条标注语句上的精确率和召回率（每个技能），以及后台任务载荷评测，由 make evals 最近一次计算；阈值 {threshold}。",
    "activity.evalsTable": "选择器评测",
    "activity.col.precision": "精确率",
    "activity.col.recall": "召回率",
    "activity.col.cases": "样例数",
    "activity.payload": "载荷评测（{skill}）：{right}/{total} 正确",
    "activity.belowThreshold": "低于阈值",
    "activity.evalsFailed": "评测摘要无法加载。",
  },
  en: {
    "activity.title": "Activity",
    "activity.intro": "Runs and audit events keep only codes, ids, counts and times, never the text of a message, memory or note.",
    "activity.refresh": "Refresh",
    "activity.more": "Load more",
    "activity.loadingMore": "Loading…",
    "activity.runs": "Recent runs",
    "activity.runsTable": "Recent runs",
    "activity.runsEmpty": "No run yet. Send a chat message and it shows here.",
    "activity.audit": "Audit trail",
    "activity.auditTable": "Audit events",
    "activity.auditEmpty": "No audit event yet. Granting or revoking a permission, running a tool or a background job records one.",
    "activity.col.time": "Time",
    "activity.col.kind": "Kind",
    "activity.col.skill": "Skill",
    "activity.col.outcome": "Outcome",
    "activity.col.duration": "Duration",
    "activity.col.memories": "Memories used",
    "activity.col.conversation": "Conversation",
    "activity.col.action": "Action",
    "activity.col.decision": "Decision",
    "activity.col.scope": "Scope",
    "activity.col.reason": "Reason code",
    "activity.ms": "{n} ms",
    "activity.none": "—",
    "activity.kind.workflow": "Workflow",
    "activity.kind.tool": "Tool",
    "activity.kind.prompt": "Prompt",
    "activity.kind.plain": "Plain reply",
    "activity.outcome.succeeded": "Succeeded",
    "activity.outcome.denied": "Denied",
    "activity.outcome.degraded": "Degraded",
    "activity.outcome.failed": "Failed",
    "activity.action.permission.grant": "Permission granted",
    "activity.action.permission.revoke": "Permission revoked",
    "activity.action.tool.execute": "Tool run",
    "activity.action.background.create": "Background job created",
    "activity.action.background.execute": "Background job run",
    "activity.action.background.cancel": "Background job cancelled",
    "activity.action.automation.execute": "Automation job run",
    "activity.decision.allowed": "Allowed",
    "activity.decision.denied": "Denied",
    "activity.decision.succeeded": "Succeeded",
    "activity.decision.failed": "Failed",
    "activity.decision.cancelled": "Cancelled",
    "activity.scope.user": "User",
    "activity.scope.agent": "Agent {id}",
    "activity.evals": "Evaluation summary",
    "activity.evalsIntro": "The selector's precision and recall per skill over {cases} labelled utterances, and the background payload evals, as make evals last computed them; threshold {threshold}.",
    "activity.evalsTable": "Selector evals",
    "activity.col.precision": "Precision",
    "activity.col.recall": "Recall",
    "activity.col.cases": "Cases",
    "activity.payload": "Payload evals ({skill}): {right}/{total} correct",
    "activity.belowThreshold": "below the threshold",
    "activity.evalsFailed": "The evaluation summary could not load.",
  },
});

// A known code translated, anything else shown as it is (a new action must never show a blank).
function translated(prefix, code) {
  const key = `${prefix}.${code}`;
  const text = t(key);
  return text === key ? code : text;
}

// A newest-first list read a page at a time: the first page on open, the next on "load more".
function usePaged(path) {
  const first = useLoad(() => get(`${path}?limit=${PAGE_SIZE}`), [path]);
  const more = useAction();
  const loadMore = () =>
    more.run(async () => {
      const cursor = first.data.nextCursor;
      const page = await get(`${path}?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`);
      first.setData((old) => ({ items: [...old.items, ...page.items], nextCursor: page.nextCursor }));
    });
  return { state: first, more, loadMore };
}

function MoreButton({ paged, label }) {
  const page = paged.state.data;
  if (!page || !page.nextCursor) return null;
  return html`<div class="more">
    <button type="button" class="quiet" aria-label=${label} disabled=${paged.more.busy} onClick=${paged.loadMore}>
      ${paged.more.busy ? t("activity.loadingMore") : t("activity.more")}
    </button>
    <${ErrorBox} error=${paged.more.error} />
  </div>`;
}

function skillOf(item) {
  if (!item.skillId) return t("activity.none");
  return html`<code>${item.skillId}</code>${item.skillVersion ? html` <span class="meta">${item.skillVersion}</span>` : ""}`;
}

function Runs({ paged, zone }) {
  return html`<${Loaded} state=${paged.state}>
    ${(page) =>
      page.items.length === 0
        ? html`<${Empty} text=${t("activity.runsEmpty")} />`
        : html`<div class="table-wrap">
              <table aria-label=${t("activity.runsTable")} data-testid="runs">
                <thead>
                  <tr>
                    <th scope="col">${t("activity.col.time")}</th>
                    <th scope="col">${t("activity.col.kind")}</th>
                    <th scope="col">${t("activity.col.skill")}</th>
                    <th scope="col">${t("activity.col.outcome")}</th>
                    <th scope="col" class="num">${t("activity.col.duration")}</th>
                    <th scope="col" class="num">${t("activity.col.memories")}</th>
                    <th scope="col">${t("activity.col.conversation")}</th>
                  </tr>
                </thead>
                <tbody>
                  ${page.items.map(
                    (run) => html`<tr key=${run.runId} data-run=${run.runId}>
                      <td>${formatTime(run.at, zone)}</td>
                      <td>${translated("activity.kind", run.kind)}</td>
                      <td>${skillOf(run)}</td>
                      <td class=${`status status-${run.outcome}`}>${translated("activity.outcome", run.outcome)}</td>
                      <td class="num">${t("activity.ms", { n: run.durationMs })}</td>
                      <td class="num">${run.memoriesUsed ?? t("activity.none")}</td>
                      <td><code>${run.conversationId}</code></td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            <${MoreButton} paged=${paged} label=${`${t("activity.more")}: ${t("activity.runs")}`} />`}
  <//>`;
}

function scopeOf(scope) {
  if (!scope) return t("activity.none");
  if (scope.type === "agent") return t("activity.scope.agent", { id: scope.agentId });
  return translated("activity.scope", scope.type);
}

function Audit({ paged, zone }) {
  return html`<${Loaded} state=${paged.state}>
    ${(page) =>
      page.items.length === 0
        ? html`<${Empty} text=${t("activity.auditEmpty")} />`
        : html`<div class="table-wrap">
              <table aria-label=${t("activity.auditTable")} data-testid="audit">
                <thead>
                  <tr>
                    <th scope="col">${t("activity.col.time")}</th>
                    <th scope="col">${t("activity.col.skill")}</th>
                    <th scope="col">${t("activity.col.action")}</th>
                    <th scope="col">${t("activity.col.decision")}</th>
                    <th scope="col">${t("activity.col.scope")}</th>
                    <th scope="col">${t("activity.col.reason")}</th>
                  </tr>
                </thead>
                <tbody>
                  ${page.items.map(
                    (event) => html`<tr key=${event.eventId} data-event=${event.eventId} data-action=${event.action}>
                      <td>${formatTime(event.at, zone)}</td>
                      <td>${skillOf(event)}</td>
                      <td>${ACTIONS.includes(event.action) ? t(`activity.action.${event.action}`) : html`<code>${event.action}</code>`}</td>
                      <td class=${`status status-${event.decision}`}>${translated("activity.decision", event.decision)}</td>
                      <td>${scopeOf(event.scope)}</td>
                      <td>${event.reason ? html`<code>${event.reason}</code>` : t("activity.none")}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            <${MoreButton} paged=${paged} label=${`${t("activity.more")}: ${t("activity.audit")}`} />`}
  <//>`;
}

async function loadEvals() {
  let response;
  try {
    response = await fetch("/skills/data/evals.json", { cache: "no-cache" });
  } catch {
    throw new ApiError(0, "network", t("error.network"));
  }
  if (!response.ok) throw new ApiError(response.status, "evals_unavailable", t("activity.evalsFailed"));
  return response.json();
}

function score(value, threshold) {
  const text = value.toFixed(3);
  if (value >= threshold) return text;
  return html`<span class="below">${text} (${t("activity.belowThreshold")})</span>`;
}

function Evals() {
  const evals = useLoad(loadEvals, []);
  return html`<${Loaded} state=${evals}>
    ${(data) => html`<p class="hint">
        ${t("activity.evalsIntro", { cases: data.selector.cases, threshold: data.threshold })}
      </p>
      <div class="table-wrap">
        <table aria-label=${t("activity.evalsTable")} data-testid="evals">
          <thead>
            <tr>
              <th scope="col">${t("activity.col.skill")}</th>
              <th scope="col" class="num">${t("activity.col.precision")}</th>
              <th scope="col" class="num">${t("activity.col.recall")}</th>
              <th scope="col" class="num">${t("activity.col.cases")}</th>
            </tr>
          </thead>
          <tbody>
            ${data.selector.skills.map(
              (row) => html`<tr key=${row.skillId} data-skill=${row.skillId}>
                <th scope="row"><code>${row.skillId}</code></th>
                <td class="num" data-testid="precision">${score(row.precision, data.threshold)}</td>
                <td class="num" data-testid="recall">${score(row.recall, data.threshold)}</td>
                <td class="num">${row.cases}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p data-testid="payload-evals" class=${data.payload.right < data.payload.total ? "below" : undefined}>
        ${t("activity.payload", { skill: data.payload.skillId, right: data.payload.right, total: data.payload.total })}
      </p>`}
  <//>`;
}

// Both lists; remounted by "refresh", so each starts again from its first page (newest first).
function Lists({ zone, onRefresh }) {
  const runs = usePaged("/skills/runs");
  const audit = usePaged("/skills/audit-events");
  return html`<div class="row">
      <button type="button" class="quiet" onClick=${onRefresh}>${t("activity.refresh")}</button>
    </div>
    <h2 id="activity-runs">${t("activity.runs")}</h2>
    <${Runs} paged=${runs} zone=${zone} />
    <h2 id="activity-audit">${t("activity.audit")}</h2>
    <${Audit} paged=${audit} zone=${zone} />`;
}

export default function Activity({ ctx }) {
  const [generation, setGeneration] = useState(0);
  return html`<section aria-labelledby="activity-title">
    <h1 id="activity-title">${t("activity.title")}</h1>
    <p class="hint">${t("activity.intro")}</p>
    <${Lists} key=${generation} zone=${ctx.profile.timezone} onRefresh=${() => setGeneration((n) => n + 1)} />
    <h2 id="activity-evals">${t("activity.evals")}</h2>
    <${Evals} />
  </section>`;
}
