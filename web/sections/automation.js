// Automation jobs (自动化任务): the default daily memory job and the user's own jobs: create, edit
// (only the changed fields are sent), pause and resume, delete (with an in-page confirm step), and each
// job's runs. Every run goes through the memory-extraction skill: without its memory:write grant the runs
// are skipped, which the default job says, with the grant's switch right next to it.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { del, listAll, patch, post } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { Empty, ErrorBox, focusAfterRender, formatTime, Loaded, Switch, useAction, useLoad } from "../lib/ui.js";

const RUNNER_SKILL = "memory-extraction";
const RUNNER_PERMISSION = "memory:write";
// No route lists the registered tool names; these are the ones the default job's config names. Other
// names can be typed, and the server's unknown_tool answer lists the registered ones.
const KNOWN_TOOLS = ["memory_write", "memory_forget"];
const PROMPT_MAX = 2000;
const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7];

register({
  zh: {
    "auto.title": "自动化任务",
    "auto.intro": "自动化任务按计划在你的时区运行 Agent，例如每天整理对话中的记忆。",
    "auto.create": "新建任务",
    "auto.createTitle": "新建自动化任务",
    "auto.editTitle": "编辑“{title}”",
    "auto.fieldTitle": "标题",
    "auto.scheduleType": "频率",
    "auto.daily": "每天",
    "auto.weekly": "每周",
    "auto.localTime": "本地时间（时:分）",
    "auto.weekday": "星期",
    "auto.timezone": "时区（IANA 名称）",
    "auto.agent": "Agent",
    "auto.allAgents": "所有 Agent",
    "auto.prompt": "提示词",
    "auto.promptCount": "{n}/{max} 字",
    "auto.tools": "可用工具",
    "auto.otherTools": "其他工具名（用逗号分隔）",
    "auto.registered": "已注册的工具：{names}",
    "auto.save": "保存",
    "auto.saving": "正在保存…",
    "auto.createSubmit": "创建任务",
    "auto.cancelEdit": "取消",
    "auto.noChange": "没有修改任何内容。",
    "auto.notPatchable": "频率和 Agent 创建后不能修改。",
    "auto.empty": "还没有自动化任务。",
    "auto.default": "默认",
    "auto.statusActive": "运行中",
    "auto.statusPaused": "已暂停",
    "auto.scheduleDaily": "每天 {time}",
    "auto.scheduleWeekly": "每{weekday} {time}",
    "auto.nextRun": "下次运行",
    "auto.nextRunPaused": "下次运行（恢复后）",
    "auto.inJobZone": "任务时区",
    "auto.inUserZone": "你的时区",
    "auto.lastRun": "上次运行",
    "auto.never": "尚未运行",
    "auto.target": "对象",
    "auto.edit": "编辑",
    "auto.editLabel": "编辑“{title}”",
    "auto.pause": "暂停",
    "auto.pauseLabel": "暂停“{title}”",
    "auto.resume": "恢复",
    "auto.resumeLabel": "恢复“{title}”",
    "auto.delete": "删除",
    "auto.deleteLabel": "删除“{title}”",
    "auto.confirmDelete": "确定删除“{title}”吗？它的运行记录也将无法查看。",
    "auto.confirmDeleteYes": "确认删除",
    "auto.confirmDeleteNo": "保留",
    "auto.deleted": "已删除“{title}”。",
    "auto.saved": "已保存“{title}”。",
    "auto.created": "已创建“{title}”。",
    "auto.showRuns": "运行记录",
    "auto.showRunsLabel": "“{title}”的运行记录",
    "auto.hideRuns": "收起运行记录",
    "auto.runsEmpty": "还没有运行记录。",
    "auto.runsRefresh": "刷新运行记录",
    "auto.colSlot": "计划时段",
    "auto.colStatus": "结果",
    "auto.colError": "错误代码",
    "auto.colStarted": "开始",
    "auto.colFinished": "结束",
    "auto.willSkip": "未授予“写入 Agent 记忆”（memory:write）权限：这个任务到时会被跳过（grant_missing），不会整理记忆。",
    "auto.willSkipOther": "未授予 memory:write 权限：这个任务的运行会被跳过。",
    "auto.skillOff": "记忆整理技能已停用：这个任务到时会被跳过（skill_disabled）。",
    "auto.grantSwitch": "授予记忆整理的 memory:write 权限",
    "auto.grantHint": "开关作用于你的全部 Agent（用户范围）。",
    "auto.prompts": "提示词与工具",
    "weekday.1": "周一",
    "weekday.2": "周二",
    "weekday.3": "周三",
    "weekday.4": "周四",
    "weekday.5": "周五",
    "weekday.6": "周六",
    "weekday.7": "周日",
    "run.succeeded": "成功",
    "run.failed": "失败",
    "run.skipped": "跳过",
    "run.running": "运行中",
  },
  en: {
    "auto.title": "Automation jobs",
    "auto.intro": "Automation jobs run agents on a schedule in your time zone, such as tidying memories from the day's chats.",
    "auto.create": "New job",
    "auto.createTitle": "New automation job",
    "auto.editTitle": "Edit “{title}”",
    "auto.fieldTitle": "Title",
    "auto.scheduleType": "Repeats",
    "auto.daily": "Daily",
    "auto.weekly": "Weekly",
    "auto.localTime": "Local time (HH:MM)",
    "auto.weekday": "Weekday",
    "auto.timezone": "Time zone (IANA name)",
    "auto.agent": "Agent",
    "auto.allAgents": "All agents",
    "auto.prompt": "Prompt",
    "auto.promptCount": "{n}/{max} characters",
    "auto.tools": "Tools",
    "auto.otherTools": "Other tool names (comma-separated)",
    "auto.registered": "Registered tools: {names}",
    "auto.save": "Save",
    "auto.saving": "Saving…",
    "auto.createSubmit": "Create job",
    "auto.cancelEdit": "Cancel",
    "auto.noChange": "Nothing was changed.",
    "auto.notPatchable": "The schedule type and the agent cannot change after creation.",
    "auto.empty": "No automation job yet.",
    "auto.default": "Default",
    "auto.statusActive": "Active",
    "auto.statusPaused": "Paused",
    "auto.scheduleDaily": "Daily at {time}",
    "auto.scheduleWeekly": "Every {weekday} at {time}",
    "auto.nextRun": "Next run",
    "auto.nextRunPaused": "Next run (once resumed)",
    "auto.inJobZone": "job's zone",
    "auto.inUserZone": "your zone",
    "auto.lastRun": "Last run",
    "auto.never": "Not run yet",
    "auto.target": "For",
    "auto.edit": "Edit",
    "auto.editLabel": "Edit “{title}”",
    "auto.pause": "Pause",
    "auto.pauseLabel": "Pause “{title}”",
    "auto.resume": "Resume",
    "auto.resumeLabel": "Resume “{title}”",
    "auto.delete": "Delete",
    "auto.deleteLabel": "Delete “{title}”",
    "auto.confirmDelete": "Delete “{title}”? Its runs will no longer be shown.",
    "auto.confirmDeleteYes": "Yes, delete",
    "auto.confirmDeleteNo": "Keep it",
    "auto.deleted": "Deleted “{title}”.",
    "auto.saved": "Saved “{title}”.",
    "auto.created": "Created “{title}”.",
    "auto.showRuns": "Runs",
    "auto.showRunsLabel": "Runs of “{title}”",
    "auto.hideRuns": "Hide runs",
    "auto.runsEmpty": "No run yet.",
    "auto.runsRefresh": "Refresh runs",
    "auto.colSlot": "Slot",
    "auto.colStatus": "Result",
    "auto.colError": "Error code",
    "auto.colStarted": "Started",
    "auto.colFinished": "Finished",
    "auto.willSkip": "The “write agent memories” permission (memory:write) is not granted: this job's runs will be skipped (grant_missing) and no memory is tidied.",
    "auto.willSkipOther": "memory:write is not granted: this job's runs will be skipped.",
    "auto.skillOff": "The memory extraction skill is switched off: this job's runs will be skipped (skill_disabled).",
    "auto.grantSwitch": "Grant memory:write to memory extraction",
    "auto.grantHint": "The switch applies to all your agents (user scope).",
    "auto.prompts": "Prompt and tools",
    "weekday.1": "Monday",
    "weekday.2": "Tuesday",
    "weekday.3": "Wednesday",
    "weekday.4": "Thursday",
    "weekday.5": "Friday",
    "weekday.6": "Saturday",
    "weekday.7": "Sunday",
    "run.succeeded": "Succeeded",
    "run.failed": "Failed",
    "run.skipped": "Skipped",
    "run.running": "Running",
  },
});

function scheduleText(job) {
  if (job.scheduleType === "weekly") {
    return t("auto.scheduleWeekly", { weekday: t(`weekday.${job.weekday}`), time: job.localTime });
  }
  return t("auto.scheduleDaily", { time: job.localTime });
}

const isRunnerGrant = (g) => g.skillId === RUNNER_SKILL && g.permissionCode === RUNNER_PERMISSION && g.status === "active";

// Whether a job's runs will be skipped for want of the grant: the server runs a job for each target
// agent the grant covers (user scope, or the agent's own scope) and skips the run when none is covered.
function lacksGrant(job, grants, agents) {
  const active = grants.filter(isRunnerGrant);
  if (active.some((g) => g.scope.type === "user")) return false;
  const covered = new Set(active.filter((g) => g.scope.type === "agent").map((g) => g.scope.agentId));
  const targets = job.agentId ? [job.agentId] : agents.map((a) => a.agentId);
  return !targets.some((id) => covered.has(id));
}

function splitTools(text) {
  return text
    .split(/[,，\s]+/)
    .map((name) => name.trim())
    .filter(Boolean);
}

// The create and edit form. On edit only the fields that differ from the job are sent (config as a
// whole, since the API takes prompt and tools together).
function JobForm({ job, ctx, knownTools, onDone, onCancel }) {
  const editing = Boolean(job);
  const tools = editing ? job.config.tools : KNOWN_TOOLS;
  const [title, setTitle] = useState(editing ? job.title : "");
  const [scheduleType, setScheduleType] = useState(editing ? job.scheduleType : "daily");
  const [localTime, setLocalTime] = useState(editing ? job.localTime : "09:00");
  const [weekday, setWeekday] = useState(editing && job.weekday ? job.weekday : 1);
  const [timezone, setTimezone] = useState(editing ? job.timezone : ctx.profile.timezone);
  const [agentId, setAgentId] = useState(editing ? job.agentId || "" : "");
  const [prompt, setPrompt] = useState(editing ? job.config.prompt : "");
  const [checked, setChecked] = useState(tools.filter((name) => knownTools.includes(name)));
  const [other, setOther] = useState(tools.filter((name) => !knownTools.includes(name)).join(", "));
  const [info, setInfo] = useState("");
  const action = useAction();
  const prefix = editing ? `edit-${job.jobId}` : "new-job";
  const heading = useRef(null);

  useLayoutEffect(() => {
    heading.current && heading.current.focus();
  }, []);

  const toggleTool = (name, on) => setChecked((old) => (on ? [...old, name] : old.filter((n) => n !== name)));

  const submit = (event) => {
    event.preventDefault();
    setInfo("");
    const chosenTools = [...new Set([...checked, ...splitTools(other)])];
    const config = { prompt, tools: chosenTools };
    action.run(async () => {
      if (!editing) {
        const body = { title, scheduleType, localTime, config };
        if (scheduleType === "weekly") body.weekday = Number(weekday);
        if (timezone.trim()) body.timezone = timezone.trim();
        if (agentId) body.agentId = agentId;
        const created = await post("/automation-jobs", body);
        onDone(created, t("auto.created", { title: created.title }));
        return;
      }
      const changes = {};
      if (title !== job.title) changes.title = title;
      if (localTime !== job.localTime) changes.localTime = localTime;
      if (job.scheduleType === "weekly" && Number(weekday) !== job.weekday) changes.weekday = Number(weekday);
      if (timezone.trim() !== job.timezone) changes.timezone = timezone.trim();
      const sameTools =
        chosenTools.length === job.config.tools.length && chosenTools.every((name) => job.config.tools.includes(name));
      if (prompt !== job.config.prompt || !sameTools) changes.config = config;
      if (Object.keys(changes).length === 0) {
        setInfo(t("auto.noChange"));
        return;
      }
      const saved = await patch(`/automation-jobs/${encodeURIComponent(job.jobId)}`, changes);
      onDone(saved, t("auto.saved", { title: saved.title }));
    });
  };

  const registered = action.error && action.error.code === "unknown_tool" && action.error.details.registered;
  const allTools = [...new Set([...knownTools, ...(registered || [])])];

  return html`<form class="card" onSubmit=${submit} aria-labelledby=${`${prefix}-title`} novalidate>
    <h2 id=${`${prefix}-title`} tabindex="-1" ref=${heading}>
      ${editing ? t("auto.editTitle", { title: job.title }) : t("auto.createTitle")}
    </h2>
    <label for=${`${prefix}-name`}>${t("auto.fieldTitle")}</label>
    <input id=${`${prefix}-name`} maxlength="80" value=${title} onInput=${(e) => setTitle(e.currentTarget.value)} />
    <div class="row">
      <div>
        <label for=${`${prefix}-type`}>${t("auto.scheduleType")}</label>
        <select id=${`${prefix}-type`} value=${scheduleType} disabled=${editing}
          aria-describedby=${editing ? `${prefix}-fixed` : undefined}
          onChange=${(e) => setScheduleType(e.currentTarget.value)}>
          <option value="daily">${t("auto.daily")}</option>
          <option value="weekly">${t("auto.weekly")}</option>
        </select>
      </div>
      ${scheduleType === "weekly" &&
      html`<div>
        <label for=${`${prefix}-weekday`}>${t("auto.weekday")}</label>
        <select id=${`${prefix}-weekday`} value=${String(weekday)} onChange=${(e) => setWeekday(Number(e.currentTarget.value))}>
          ${WEEKDAYS.map((d) => html`<option value=${String(d)}>${t(`weekday.${d}`)}</option>`)}
        </select>
      </div>`}
      <div>
        <label for=${`${prefix}-time`}>${t("auto.localTime")}</label>
        <input id=${`${prefix}-time`} type="time" step="60" value=${localTime} onInput=${(e) => setLocalTime(e.currentTarget.value)} />
      </div>
      <div>
        <label for=${`${prefix}-zone`}>${t("auto.timezone")}</label>
        <input id=${`${prefix}-zone`} value=${timezone} maxlength="64" onInput=${(e) => setTimezone(e.currentTarget.value)} />
      </div>
      <div>
        <label for=${`${prefix}-agent`}>${t("auto.agent")}</label>
        <select id=${`${prefix}-agent`} value=${agentId} disabled=${editing}
          aria-describedby=${editing ? `${prefix}-fixed` : undefined}
          onChange=${(e) => setAgentId(e.currentTarget.value)}>
          <option value="">${t("auto.allAgents")}</option>
          ${ctx.agents.map((a) => html`<option value=${a.agentId}>${a.name}</option>`)}
          ${editing && job.agentId && !ctx.agents.some((a) => a.agentId === job.agentId) &&
          html`<option value=${job.agentId}>${job.agentId}</option>`}
        </select>
      </div>
    </div>
    ${editing && html`<p id=${`${prefix}-fixed`} class="hint">${t("auto.notPatchable")}</p>`}
    <label for=${`${prefix}-prompt`}>${t("auto.prompt")}</label>
    <textarea id=${`${prefix}-prompt`} maxlength=${PROMPT_MAX} aria-describedby=${`${prefix}-prompt-count`} value=${prompt}
      onInput=${(e) => setPrompt(e.currentTarget.value)}></textarea>
    <p id=${`${prefix}-prompt-count`} class="hint">${t("auto.promptCount", { n: prompt.length, max: PROMPT_MAX })}</p>
    <fieldset class="tools">
      <legend>${t("auto.tools")}</legend>
      ${allTools.map(
        (name) => html`<label class="check">
          <input type="checkbox" checked=${checked.includes(name)} onChange=${(e) => toggleTool(name, e.currentTarget.checked)} />
          <code>${name}</code>
        </label>`,
      )}
      <label for=${`${prefix}-other`}>${t("auto.otherTools")}</label>
      <input id=${`${prefix}-other`} value=${other} onInput=${(e) => setOther(e.currentTarget.value)} />
    </fieldset>
    <div class="row">
      <button type="submit" disabled=${action.busy}>
        ${action.busy ? t("auto.saving") : editing ? t("auto.save") : t("auto.createSubmit")}
      </button>
      <button type="button" class="quiet" onClick=${onCancel}>${t("auto.cancelEdit")}</button>
    </div>
    <p class="hint" role="status" aria-live="polite">${info}</p>
    <${ErrorBox} error=${action.error} />
    ${registered && html`<p class="hint">${t("auto.registered", { names: registered.join(", ") })}</p>`}
  </form>`;
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
                    <td>${run.errorCode ? html`<code>${run.errorCode}</code>` : "—"}</td>
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
  const flip = (on) =>
    action.run(async () => {
      await patch("/skills/permissions", {
        skillId: RUNNER_SKILL,
        permissionCode: RUNNER_PERMISSION,
        scope: { type: "user" },
        granted: on,
      });
      await onChanged();
    });
  return html`<div class="row">
    <${Switch} id="grant-memory-write" checked=${granted} label=${t("auto.grantSwitch")} describedBy="grant-memory-write-hint"
      disabled=${action.busy} onChange=${flip} />
    <span id="grant-memory-write-hint" class="hint">${t("auto.grantSwitch")} · ${t("auto.grantHint")}</span>
    <${ErrorBox} error=${action.error} />
  </div>`;
}

function JobCard({ job, ctx, access, knownTools, onSaved, onDeleted, onAccessChanged }) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [showRuns, setShowRuns] = useState(false);
  const action = useAction();
  const confirmYes = useRef(null);
  const deleteButton = useRef(null);
  const headingId = `job-${job.jobId}`;
  const userZone = ctx.profile.timezone;
  const agentName = job.agentId
    ? (ctx.agents.find((a) => a.agentId === job.agentId) || { name: job.agentId }).name
    : t("auto.allAgents");
  const userGranted = access.grants.some((g) => isRunnerGrant(g) && g.scope.type === "user");
  // Said only once the grants are known, so the warning never flashes while they load.
  const skips = access.loaded && (!access.enabled || lacksGrant(job, access.grants, ctx.agents));

  useLayoutEffect(() => {
    if (confirming && confirmYes.current) confirmYes.current.focus();
  }, [confirming]);

  const setStatus = (status) =>
    action.run(async () => onSaved(await patch(`/automation-jobs/${encodeURIComponent(job.jobId)}`, { status })));
  const remove = () =>
    action.run(async () => {
      await del(`/automation-jobs/${encodeURIComponent(job.jobId)}`);
      onDeleted(job);
    });
  const keepIt = () => {
    setConfirming(false);
    // Back to the button that opened the question, for keyboard users.
    focusAfterRender(deleteButton);
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
      <p class="prewrap">${job.config.prompt}</p>
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
        aria-label=${t("auto.showRunsLabel", { title: job.title })} onClick=${() => setShowRuns(!showRuns)}>
        ${showRuns ? t("auto.hideRuns") : t("auto.showRuns")}
      </button>
      <button type="button" class="danger" ref=${deleteButton} disabled=${action.busy || confirming}
        aria-label=${t("auto.deleteLabel", { title: job.title })} onClick=${() => setConfirming(true)}>
        ${t("auto.delete")}
      </button>
    </div>
    ${confirming &&
    html`<div class="notice" role="alertdialog" aria-labelledby=${`${headingId}-confirm`}
      onKeyDown=${(e) => e.key === "Escape" && keepIt()}>
      <p id=${`${headingId}-confirm`}>${t("auto.confirmDelete", { title: job.title })}</p>
      <div class="row">
        <button type="button" class="danger" ref=${confirmYes} disabled=${action.busy} onClick=${remove}>${t("auto.confirmDeleteYes")}</button>
        <button type="button" class="quiet" onClick=${keepIt}>${t("auto.confirmDeleteNo")}</button>
      </div>
    </div>`}
    <${ErrorBox} error=${action.error} />
    ${showRuns && html`<${Runs} job=${job} />`}
  </article>`;
}

async function loadAccess() {
  const [grants, skills] = await Promise.all([listAll("/skills/permissions"), listAll("/skills")]);
  const skill = skills.find((s) => s.skillId === RUNNER_SKILL);
  return { grants, enabled: Boolean(skill && skill.enabled) };
}

export default function Automation({ ctx }) {
  const jobs = useLoad(() => listAll("/automation-jobs"), []);
  const access = useLoad(loadAccess, []);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState("");

  const knownTools = [
    ...new Set([...KNOWN_TOOLS, ...(jobs.data || []).flatMap((job) => job.config.tools)]),
  ];
  const accessState = access.data ? { ...access.data, loaded: true } : { grants: [], enabled: true, loaded: false };

  const saved = (job, message) => {
    jobs.setData((items) => items.map((j) => (j.jobId === job.jobId ? job : j)));
    setNotice(message || "");
  };
  const created = (job, message) => {
    setCreating(false);
    jobs.setData((items) => [...items, job]);
    setNotice(message);
  };
  const deleted = (job) => {
    jobs.setData((items) => items.filter((j) => j.jobId !== job.jobId));
    setNotice(t("auto.deleted", { title: job.title }));
  };

  return html`<section aria-labelledby="automation-title">
    <div class="row">
      <h1 id="automation-title" class="grow">${t("auto.title")}</h1>
      ${!creating && html`<button type="button" onClick=${() => (setNotice(""), setCreating(true))}>${t("auto.create")}</button>`}
    </div>
    <p class="hint">${t("auto.intro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="automation-notice">${notice}</p>
    ${access.status === "error" && html`<${ErrorBox} error=${access.error} onRetry=${access.reload} />`}
    ${creating &&
    html`<${JobForm} ctx=${ctx} knownTools=${knownTools} onDone=${created} onCancel=${() => setCreating(false)} />`}
    <${Loaded} state=${jobs}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("auto.empty")} />`
          : items.map(
              (job) => html`<${JobCard} key=${job.jobId} job=${job} ctx=${ctx} access=${accessState} knownTools=${knownTools}
                onSaved=${saved} onDeleted=${deleted} onAccessChanged=${access.reload} />`,
            )}
    <//>
  </section>`;
}
