// The runs and the audit trail (audit.js), newest first, a page at a time.
import { get } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { skillName } from "../../lib/names.js";
import { Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../../lib/ui.js";
import { Audit, translated } from "./audit.js";

const PAGE_SIZE = 20;

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
  const name = skillName({ skillId: item.skillId, name: item.skillId });
  const label = name === item.skillId ? html`<code>${name}</code>` : html`<span data-skill-id=${item.skillId}>${name}</span>`;
  return html`${label}${item.skillVersion ? html` <span class="meta">${item.skillVersion}</span>` : ""}`;
}

// Which conversation a run was in, by its agent's name (a link to the chat) for an agent's own conversation,
// else in words: a conversation id is never shown as text.
function conversationOf(run, agents) {
  const agent = (agents || []).find((a) => a.defaultConversationId === run.conversationId);
  if (!agent) return t("activity.otherConversation");
  return html`<a href=${`#/agents?agent=${encodeURIComponent(agent.agentId)}`}>${agent.name}</a>`;
}

function Runs({ paged, zone, agents }) {
  return html`<${Loaded} state=${paged.state}>
    ${(page) =>
      page.items.length === 0
        ? html`<${Empty} text=${t("activity.runsEmpty")} />`
        : html`<div class="table-wrap" role="region" tabindex="0" aria-label=${t("activity.runsTable")}>
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
                      <td>${conversationOf(run, agents)}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            <${MoreButton} paged=${paged} label=${`${t("activity.more")}: ${t("activity.runs")}`} />`}
  <//>`;
}

// Both lists; remounted by "refresh", so each starts again from its first page (newest first).
export function Lists({ zone, agents, onRefresh }) {
  const runs = usePaged("/skills/runs");
  return html`<div class="row">
      <button type="button" class="quiet" onClick=${onRefresh}>${t("activity.refresh")}</button>
    </div>
    <h2 id="activity-runs">${t("activity.runs")}</h2>
    <${Runs} paged=${runs} zone=${zone} agents=${agents} />
    <h2 id="activity-audit">${t("activity.audit")}</h2>
    <${Audit} zone=${zone} agents=${agents} />`;
}
