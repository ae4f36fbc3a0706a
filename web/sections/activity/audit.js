// The audit trail with its filters (skill, action, outcome, endpoint, from/to in the profile's zone), newest
// first, a page at a time. A filtered page may come back short, or empty, with a cursor (the server reads a
// bounded number of events per page): "load more" follows it.
import { useState } from "preact/hooks";
import { get } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { reasonOf, skillName } from "../../lib/names.js";
import { Empty, ErrorBox, formatTime, Loaded, useAction, useLoad, zonedInstant } from "../../lib/ui.js";

const PAGE_SIZE = 20;
// The skills the page has names for (lib/names.js), offered in the skill filter.
const SKILLS = ["memory-recall", "memory-context", "memory-extraction", "goal-check-in-reminder", "goal-setting",
  "daily-plan", "hosted-workflows"];
// Actions and families (a prefix ending in "."), as the API accepts them (docs/contract.md "Audit and runs").
export const ACTIONS = [
  "permission.grant",
  "permission.revoke",
  "tool.execute",
  "background.create",
  "background.execute",
  "background.cancel",
  "automation.execute",
  "hosted_endpoint.",
  "hosted_endpoint.call",
  "hosted_endpoint.approval",
  "user_capability.",
  "user_capability.draft.",
];
const DECISIONS = ["allowed", "denied", "succeeded", "failed", "cancelled"];
const CALLER_KINDS = ["person", "host"];

// A known code translated, anything else shown as it is (a new code must never show a blank).
export function translated(prefix, code) {
  const key = `${prefix}.${code}`;
  const text = t(key);
  return text === key ? code : text;
}

// "2026-12-04T10:00" (a datetime-local value, read in `zone`) as an API time with an offset (UTC, "Z").
export function zonedToApi(local, zone) {
  const instant = zonedInstant(local, zone);
  return instant ? new Date(instant.ms).toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

function queryOf(filters, zone) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const name of ["skillId", "action", "decision", "endpointId"]) {
    if (filters[name]) params.set(name, filters[name].trim());
  }
  for (const name of ["from", "to"]) {
    const value = zonedToApi(filters[name], zone);
    if (value) params.set(name, value);
  }
  return params.toString();
}

const EMPTY = { skillId: "", action: "", decision: "", endpointId: "", from: "", to: "" };

function Filters({ applied, onApply }) {
  const [draft, setDraft] = useState(applied);
  const field = (name) => ({
    id: `audit-${name}`,
    name,
    value: draft[name],
    onInput: (event) => setDraft({ ...draft, [name]: event.currentTarget.value }),
    onChange: (event) => setDraft({ ...draft, [name]: event.currentTarget.value }),
  });
  const option = (value, label) => html`<option value=${value}>${label}</option>`;
  return html`<form class="filters" aria-label=${t("activity.filters")} data-testid="audit-filters"
      onSubmit=${(event) => { event.preventDefault(); onApply(draft); }}>
    <label for="audit-skillId">${t("activity.col.skill")}</label>
    <select ...${field("skillId")}>
      ${option("", t("activity.any"))}
      ${SKILLS.map((id) => option(id, skillName({ skillId: id, name: id })))}
    </select>
    <label for="audit-action">${t("activity.col.action")}</label>
    <select ...${field("action")}>
      ${option("", t("activity.any"))}
      ${ACTIONS.map((code) => option(code, translated("activity.action", code)))}
    </select>
    <label for="audit-decision">${t("activity.col.decision")}</label>
    <select ...${field("decision")}>
      ${option("", t("activity.any"))}
      ${DECISIONS.map((code) => option(code, translated("activity.decision", code)))}
    </select>
    <label for="audit-endpointId">${t("activity.endpoint")}</label>
    <input type="text" autocomplete="off" ...${field("endpointId")} />
    <label for="audit-from">${t("activity.from")}</label>
    <input type="datetime-local" ...${field("from")} />
    <label for="audit-to">${t("activity.to")}</label>
    <input type="datetime-local" ...${field("to")} />
    <div class="row">
      <button type="submit">${t("activity.filter")}</button>
      <button type="button" class="quiet" onClick=${() => { setDraft(EMPTY); onApply(EMPTY); }}>
        ${t("activity.clearFilters")}
      </button>
    </div>
  </form>`;
}

function scopeOf(scope, agents) {
  if (!scope) return t("activity.none");
  if (scope.type === "agent") {
    const agent = (agents || []).find((a) => a.agentId === scope.agentId);
    return agent ? t("activity.scope.agent", { name: agent.name }) : t("activity.scope.otherAgent");
  }
  return translated("activity.scope", scope.type);
}

function skillOf(event) {
  const name = skillName({ skillId: event.skillId, name: event.skillId });
  const label = name === event.skillId ? html`<code>${name}</code>` : html`<span data-skill-id=${event.skillId}>${name}</span>`;
  return html`${label}${event.skillVersion ? html` <span class="meta">${event.skillVersion}</span>` : ""}`;
}

function decidedBy(event) {
  const kind = event.metadata && event.metadata.callerKind;
  if (!kind) return null;
  const label = CALLER_KINDS.includes(kind) ? t(`activity.caller.${kind}`) : kind;
  return html`<div class="meta" data-testid="decided-by">${t("activity.decidedBy", { kind: label })}</div>`;
}

// The filters and the list; the list is remounted for each query, so a new query starts from its first page
// and never shows (or follows the cursor of) the previous query's rows.
export function Audit({ zone, agents }) {
  const [filters, setFilters] = useState(EMPTY);
  const query = queryOf(filters, zone);
  return html`<${Filters} applied=${filters} onApply=${setFilters} />
    <${AuditList} key=${query} query=${query} zone=${zone} agents=${agents} filtered=${query !== queryOf(EMPTY, zone)} />`;
}

function AuditList({ query, zone, agents, filtered }) {
  const first = useLoad(() => get(`/skills/audit-events?${query}`), [query]);
  const more = useAction();
  const loadMore = () =>
    more.run(async () => {
      const cursor = first.data.nextCursor;
      const page = await get(`/skills/audit-events?${query}&cursor=${encodeURIComponent(cursor)}`);
      first.setData((old) => ({ items: [...old.items, ...page.items], nextCursor: page.nextCursor }));
    });
  return html`<${Loaded} state=${first}>
      ${(page) => html`${page.items.length === 0
          ? html`<${Empty} text=${filtered ? t("activity.auditNoMatch") : t("activity.auditEmpty")} />`
          : html`<div class="table-wrap" role="region" tabindex="0" aria-label=${t("activity.auditTable")}>
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
                    (event) => html`<tr key=${event.eventId} data-event=${event.eventId} data-action=${event.action}
                        data-decision=${event.decision}>
                      <td>${formatTime(event.at, zone)}</td>
                      <td>${skillOf(event)}</td>
                      <td>${translated("activity.action", event.action) === event.action
                        ? html`<code>${event.action}</code>` : translated("activity.action", event.action)}</td>
                      <td class=${`status status-${event.decision}`}>
                        ${translated("activity.decision", event.decision)}${decidedBy(event)}
                      </td>
                      <td>${scopeOf(event.scope, agents)}</td>
                      <td>${reasonOf(event.reason)}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`}
        ${page.nextCursor
          ? html`<div class="more">
              <button type="button" class="quiet" aria-label=${`${t("activity.more")}: ${t("activity.audit")}`}
                disabled=${more.busy} onClick=${loadMore}>
                ${more.busy ? t("activity.loadingMore") : t("activity.more")}
              </button>
              <${ErrorBox} error=${more.error} />
            </div>`
          : ""}`}
    <//>`;
}
