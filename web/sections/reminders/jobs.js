// The scheduled reminders, with their status and a cancel button.
import { post } from "../../lib/api.js";
import { ask } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { reasonOf } from "../../lib/names.js";
import { Empty, ErrorBox, formatTime, useAction } from "../../lib/ui.js";

export const STATUSES = ["scheduled", "running", "retrying", "succeeded", "failed", "cancelled"];
export const ACTIVE = new Set(["scheduled", "running", "retrying"]);
const CANCELLABLE = new Set(["scheduled", "retrying"]);

function StatusLabel({ status }) {
  return html`<span class="status status-${status}" data-status=${status}>${t(`job.${status}`)}</span>`;
}

function JobRow({ job, agentName, zone, onChanged }) {
  const action = useAction();
  const when = formatTime(job.scheduledAt, zone);
  const cancel = async () => {
    if (!(await ask("cancelReminder", { time: when }))) return;
    await action.run(async () => {
      try {
        onChanged(await post(`/skills/background-jobs/${encodeURIComponent(job.jobId)}/cancel`));
      } catch (error) {
        // job_not_cancellable: the job started meanwhile; show the error and the job's real state.
        onChanged(null);
        throw error;
      }
    });
  };
  return html`<tr data-job=${job.jobId}>
    <td><${StatusLabel} status=${job.status} /></td>
    <td>${when}</td>
    <td>${agentName || html`<span class="meta">${t("reminders.unknownAgent")}</span>`}</td>
    <td class="note-cell" data-user-content=${job.note ? "" : undefined}>${job.note || "—"}</td>
    <td data-testid="attempts">${job.attempts}/${job.maxAttempts}</td>
    <td data-testid="error-code" data-code=${job.lastErrorCode || undefined}>${reasonOf(job.lastErrorCode)}</td>
    <td>
      ${CANCELLABLE.has(job.status)
        ? html`<button type="button" class="danger" disabled=${action.busy} aria-label=${t("reminders.cancelLabel", { time: when })}
            onClick=${cancel}>${t("reminders.cancel")}</button>`
        : html`<span class="meta">—</span>`}
      <${ErrorBox} error=${action.error} />
    </td>
  </tr>`;
}

export function JobList({ jobs, agents, zone, filter, onChanged }) {
  const names = new Map(agents.map((a) => [a.agentId, a.name]));
  if (jobs.length === 0) return html`<${Empty} text=${t(filter ? "reminders.emptyFiltered" : "reminders.empty")} />`;
  return html`<table aria-labelledby="reminder-list-title">
    <thead>
      <tr>
        <th scope="col">${t("reminders.colStatus")}</th>
        <th scope="col">${t("reminders.colWhen")}</th>
        <th scope="col">${t("reminders.colAgent")}</th>
        <th scope="col">${t("reminders.colNote")}</th>
        <th scope="col">${t("reminders.colAttempts")}</th>
        <th scope="col">${t("reminders.colError")}</th>
        <th scope="col">${t("reminders.colActions")}</th>
      </tr>
    </thead>
    <tbody>
      ${jobs.map((job) => html`<${JobRow} key=${job.jobId} job=${job} agentName=${names.get(job.agentId)} zone=${zone} onChanged=${onChanged} />`)}
    </tbody>
  </table>`;
}
