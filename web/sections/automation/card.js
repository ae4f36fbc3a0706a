// One automation job: its schedule, runs, grant, pause/resume, edit and delete.
import { useState } from "preact/hooks";
import { del, listAll, patch } from "../../lib/api.js";
import { ask, confirmAction } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { permissionName, reasonOf } from "../../lib/names.js";
import { Empty, ErrorBox, formatTime, Loaded, Switch, useAction, useLoad } from "../../lib/ui.js";
import { isRunnerGrant, lacksGrant, RUNNER_PERMISSION, RUNNER_SKILL } from "./access.js";
import { JobForm } from "./form.js";

function scheduleText(job) {
  if (job.scheduleType === "weekly") {
    return t("auto.scheduleWeekly", { weekday: t(`weekday.${job.weekday}`), time: job.localTime });
  }
  return t("auto.scheduleDaily", { time: job.localTime });
}

function RunStatus({ status }) {
  return html`<span class="status status-${status}" data-status=${status}>${t(`run.${status}`)}</span>`;
}

function Runs({ job }) {
  const runs = useLoad(() => listAll(`/automation-jobs/${encodeURIComponent(job.jobId)}/runs`, 100), [job.jobId]);
  const zone = job.timezone;
  return html`<div class="runs">
    <button type="button" class="quiet" onClick=${runs.reload}>${t("auto.runsRefresh")}</button>
    <${Loaded} state=${runs}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("auto.runsEmpty")} />`
          : html`<table aria-label=${t("auto.showRunsLabel", { title: job.title })}>
              <thead>
                <tr>
                  <th scope="col">${t("auto.colSlot")}</th>
                  <th scope="col">${t("auto.colStatus")}</th>
                  <th scope="col">${t("auto.colError")}</th>
                  <th scope="col">${t("auto.colStarted")}</th>
                  <th scope="col">${t("auto.colFinished")}</th>
                </tr>
              </thead>
              <tbody>
                ${items.map(
                  (run) => html`<tr key=${run.runId} data-run=${run.runId}>
                    <td>${formatTime(run.scheduledSlot, zone)}</td>
                    <td><${RunStatus} status=${run.status} /></td>
                    <td>${reasonOf(run.errorCode)}</td>
                    <td>${formatTime(run.startedAt, zone)}</td>
                    <td>${formatTime(run.finishedAt, zone)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`}
    <//>
  </div>`;
}

function GrantSwitch({ granted, onChanged }) {
  const action = useAction();
  const flip = async (on) => {
    if (!on && !(await ask("revoke", { name: permissionName(RUNNER_PERMISSION), scope: t("confirm.scopeUser") }))) return;
    await action.run(async () => {
      await patch("/skills/permissions", {
        skillId: RUNNER_SKILL,
        permissionCode: RUNNER_PERMISSION,
        scope: { type: "user" },
        granted: on,
      });
      await onChanged();
    });
  };
  return html`<div class="row">
    <${Switch} id="grant-memory-write" checked=${granted} label=${t("auto.grantSwitch")} describedBy="grant-memory-write-hint"
      disabled=${action.busy} onChange=${flip} />
    <span id="grant-memory-write-hint" class="hint">${t("auto.grantSwitch")} · ${t("auto.grantHint")}</span>
    <${ErrorBox} error=${action.error} />
  </div>`;
}

// The job as the person reads it: the default job's texts still as offered are shown in the page's language
// (`defaultTexts`; the stored texts are Chinese), anything the person wrote as written.
export function shown(job) {
  const defaults = job.defaultTexts || [];
  if (defaults.length === 0) return job;
  return {
    ...job,
    title: defaults.includes("title") ? t("auto.defaultTitle") : job.title,
    config: defaults.includes("prompt") ? { ...job.config, prompt: t("auto.defaultPrompt") } : job.config,
  };
}

// A prompt with the tool names it mentions as code spans.
function promptText(prompt, tools) {
  return prompt.split(/([A-Za-z][\w.-]*)/).map((part) => (tools.includes(part) ? html`<code>${part}</code>` : part));
}

export function JobCard({ job: stored, ctx, access, knownTools, onSaved, onDeleted, onAccessChanged }) {
  const job = shown(stored);
  const [editing, setEditing] = useState(false);
  const [showRuns, setShowRuns] = useState(false);
  const action = useAction();
  const headingId = `job-${job.jobId}`;
  const userZone = ctx.profile.timezone;
  const agentName = job.agentId
    ? (ctx.agents.find((a) => a.agentId === job.agentId) || { name: job.agentId }).name
    : t("auto.allAgents");
  const userGranted = access.grants.some((g) => isRunnerGrant(g) && g.scope.type === "user");
  // Said only once the grants are known, so the warning never flashes while they load.
  const skips = access.loaded && (!access.enabled || lacksGrant(job, access.grants, ctx.agents));

  const setStatus = (status) =>
    action.run(async () => onSaved(await patch(`/automation-jobs/${encodeURIComponent(job.jobId)}`, { status })));
  const remove = async () => {
    const asked = {
      title: t("confirm.deleteJob.title"),
      body: t("auto.confirmDelete", { title: job.title }),
      confirm: t("auto.confirmDeleteYes"),
      keep: t("auto.confirmDeleteNo"),
    };
    if (!(await confirmAction(asked))) return;
    await action.run(async () => {
      await del(`/automation-jobs/${encodeURIComponent(job.jobId)}`);
      onDeleted(job);
    });
  };

  if (editing) {
    return html`<${JobForm} job=${job} ctx=${ctx} knownTools=${knownTools}
      onDone=${(saved, message) => {
        setEditing(false);
        onSaved(saved, message);
      }}
      onCancel=${() => setEditing(false)} />`;
  }

  return html`<article class="card" aria-labelledby=${headingId} data-job=${job.jobId}>
    <div class="row">
      <h2 id=${headingId} class="grow">
        ${job.title} ${job.isDefault && html`<span class="tag" data-testid="default-tag">${t("auto.default")}</span>`}
      </h2>
      <span class="status status-${job.status}" data-status=${job.status}>
        ${job.status === "paused" ? t("auto.statusPaused") : t("auto.statusActive")}
      </span>
    </div>
    <p class="meta">
      <span data-testid="schedule">${scheduleText(job)}</span> · ${job.timezone} · ${t("auto.target")}: ${agentName}
    </p>
    <dl class="facts">
      <dt>${job.status === "paused" ? t("auto.nextRunPaused") : t("auto.nextRun")}</dt>
      <dd data-testid="next-run">
        <span data-testid="next-run-job-zone">${formatTime(job.nextRunAt, job.timezone)}</span> (${t("auto.inJobZone")} ${job.timezone})
        ${userZone !== job.timezone &&
        html` · <span data-testid="next-run-user-zone">${formatTime(job.nextRunAt, userZone)}</span> (${t("auto.inUserZone")} ${userZone})`}
      </dd>
      <dt>${t("auto.lastRun")}</dt>
      <dd>
        ${job.lastRunAt
          ? html`${formatTime(job.lastRunAt, job.timezone)} ${job.lastRunStatus && html`<${RunStatus} status=${job.lastRunStatus} />`}`
          : t("auto.never")}
      </dd>
    </dl>
    ${skips &&
    html`<p class="notice" data-testid="will-skip">
      ${!access.enabled ? t("auto.skillOff") : job.isDefault ? t("auto.willSkip") : t("auto.willSkipOther")}
    </p>`}
    ${job.isDefault && html`<${GrantSwitch} granted=${userGranted} onChanged=${onAccessChanged} />`}
    <details>
      <summary>${t("auto.prompts")}</summary>
      <p class="prewrap">${promptText(job.config.prompt, job.config.tools)}</p>
      <p>${job.config.tools.map((name) => html`<code class="tag">${name}</code> `)}</p>
    </details>
    <div class="row actions">
      <button type="button" class="quiet" aria-label=${t("auto.editLabel", { title: job.title })} onClick=${() => setEditing(true)}>
        ${t("auto.edit")}
      </button>
      ${job.status === "paused"
        ? html`<button type="button" class="quiet" disabled=${action.busy} aria-label=${t("auto.resumeLabel", { title: job.title })}
            onClick=${() => setStatus("active")}>${t("auto.resume")}</button>`
        : html`<button type="button" class="quiet" disabled=${action.busy} aria-label=${t("auto.pauseLabel", { title: job.title })}
            onClick=${() => setStatus("paused")}>${t("auto.pause")}</button>`}
      <button type="button" class="quiet" aria-expanded=${showRuns ? "true" : "false"}
        aria-label=${t(showRuns ? "auto.hideRunsLabel" : "auto.showRunsLabel", { title: job.title })} onClick=${() => setShowRuns(!showRuns)}>
        ${showRuns ? t("auto.hideRuns") : t("auto.showRuns")}
      </button>
      <button type="button" class="danger" disabled=${action.busy}
        aria-label=${t("auto.deleteLabel", { title: job.title })} onClick=${remove}>
        ${t("auto.delete")}
      </button>
    </div>
    <${ErrorBox} error=${action.error} />
    ${showRuns && html`<${Runs} job=${job} />`}
  </article>`;
}
