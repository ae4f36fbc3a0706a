// Goal check-in reminders (目标复盘提醒): schedule a reminder for an agent at a local date and time, and
// follow every job through its states. The form stays visible without the proactive_message:write grant
// (or with the skill switched off), but its submit is disabled with the reason and a link to the switch.
import { useEffect, useState } from "preact/hooks";
import { listAll, post } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { browserZone, Empty, ErrorBox, formatTime, Loaded, useAction, useLoad } from "../lib/ui.js";

const SKILL = "goal-check-in-reminder";
const PERMISSION = "proactive_message:write";
const NOTE_MAX = 500;
const DEFAULT_LEAD_MINUTES = 5;
const POLL_MS = 3000;
const STATUSES = ["scheduled", "running", "retrying", "succeeded", "failed", "cancelled"];
const ACTIVE = new Set(["scheduled", "running", "retrying"]);
const CANCELLABLE = new Set(["scheduled", "retrying"]);
const GRANT_LINK = `#/permissions?skill=${encodeURIComponent(SKILL)}&permission=${encodeURIComponent(PERMISSION)}`;

register({
  zh: {
    "reminders.title": "目标复盘提醒",
    "reminders.intro": "到了约定的时间，Agent 会在它的默认会话里主动发一条目标复盘消息。",
    "reminders.formTitle": "安排提醒",
    "reminders.agent": "Agent",
    "reminders.noAgents": "还没有 Agent，提醒需要发给一个 Agent。",
    "reminders.createAgent": "去创建 Agent",
    "reminders.when": "本地日期和时间",
    "reminders.zone": "按浏览器时区 {zone} 计算",
    "reminders.shifted": "这个时刻在 {zone} 不存在（夏令时切换），将按 {time} 提交。",
    "reminders.note": "关注点（可选）",
    "reminders.noteCount": "{n}/{max} 字",
    "reminders.submit": "安排提醒",
    "reminders.submitting": "正在安排…",
    "reminders.created": "已安排提醒：{time}。",
    "reminders.checking": "正在确认权限…",
    "reminders.checkFailed": "无法确认权限，请刷新后重试。",
    "reminders.needGrant": "未授予“发送主动提醒”（proactive_message:write）权限，暂时不能安排提醒。",
    "reminders.needGrantAgent": "这个 Agent 没有“发送主动提醒”（proactive_message:write）权限，暂时不能安排提醒。",
    "reminders.grantLink": "前往执行权限开启",
    "reminders.skillDisabled": "目标复盘提醒技能已停用，暂时不能安排提醒。",
    "reminders.skillLink": "前往技能启用",
    "reminders.needTime": "请选择日期和时间。",
    "reminders.listTitle": "提醒任务",
    "reminders.filter": "按状态筛选",
    "reminders.all": "全部",
    "reminders.refresh": "刷新",
    "reminders.empty": "还没有提醒任务。",
    "reminders.emptyFiltered": "没有这个状态的提醒任务。",
    "reminders.colStatus": "状态",
    "reminders.colWhen": "计划时间",
    "reminders.colAgent": "Agent",
    "reminders.colNote": "关注点",
    "reminders.colAttempts": "尝试次数",
    "reminders.colError": "最后错误",
    "reminders.colActions": "操作",
    "reminders.cancel": "取消",
    "reminders.cancelLabel": "取消 {time} 的提醒",
    "reminders.cancelled": "已取消提醒。",
    "reminders.noAction": "不可取消",
    "reminders.unknownAgent": "（已不存在的 Agent）",
    "reminders.polling": "有未结束的任务，列表每 {s} 秒自动刷新。",
    "job.scheduled": "等待",
    "job.running": "运行",
    "job.retrying": "重试",
    "job.succeeded": "完成",
    "job.failed": "失败",
    "job.cancelled": "取消",
  },
  en: {
    "reminders.title": "Goal check-in reminders",
    "reminders.intro": "At the agreed time the agent sends a goal check-in message in its default conversation.",
    "reminders.formTitle": "Schedule a reminder",
    "reminders.agent": "Agent",
    "reminders.noAgents": "There is no agent yet; a reminder is sent by an agent.",
    "reminders.createAgent": "Create an agent",
    "reminders.when": "Local date and time",
    "reminders.zone": "In the browser's time zone, {zone}",
    "reminders.shifted": "This time does not exist in {zone} (a daylight saving change); {time} will be sent.",
    "reminders.note": "Focus (optional)",
    "reminders.noteCount": "{n}/{max} characters",
    "reminders.submit": "Schedule reminder",
    "reminders.submitting": "Scheduling…",
    "reminders.created": "Reminder scheduled for {time}.",
    "reminders.checking": "Checking the permission…",
    "reminders.checkFailed": "The permission could not be checked; refresh and retry.",
    "reminders.needGrant": "The “send proactive reminders” permission (proactive_message:write) is not granted, so no reminder can be scheduled.",
    "reminders.needGrantAgent": "This agent lacks the “send proactive reminders” permission (proactive_message:write), so no reminder can be scheduled.",
    "reminders.grantLink": "Turn it on under Permissions",
    "reminders.skillDisabled": "The goal check-in reminder skill is switched off, so no reminder can be scheduled.",
    "reminders.skillLink": "Enable it under Skills",
    "reminders.needTime": "Choose a date and time.",
    "reminders.listTitle": "Reminder jobs",
    "reminders.filter": "Filter by status",
    "reminders.all": "All",
    "reminders.refresh": "Refresh",
    "reminders.empty": "No reminder jobs yet.",
    "reminders.emptyFiltered": "No reminder job has this status.",
    "reminders.colStatus": "Status",
    "reminders.colWhen": "Scheduled for",
    "reminders.colAgent": "Agent",
    "reminders.colNote": "Focus",
    "reminders.colAttempts": "Attempts",
    "reminders.colError": "Last error",
    "reminders.colActions": "Actions",
    "reminders.cancel": "Cancel",
    "reminders.cancelLabel": "Cancel the reminder at {time}",
    "reminders.cancelled": "Reminder cancelled.",
    "reminders.noAction": "Cannot be cancelled",
    "reminders.unknownAgent": "(an agent that no longer exists)",
    "reminders.polling": "Some jobs are not finished; the list refreshes every {s} seconds.",
    "job.scheduled": "Scheduled",
    "job.running": "Running",
    "job.retrying": "Retrying",
    "job.succeeded": "Succeeded",
    "job.failed": "Failed",
    "job.cancelled": "Cancelled",
  },
});

const pad = (n) => String(n).padStart(2, "0");

// A Date's wall-clock value in the browser's zone, as <input type="datetime-local"> holds it.
function localInputValue(date) {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function defaultWhen() {
  const soon = new Date(Date.now() + DEFAULT_LEAD_MINUTES * 60_000);
  soon.setSeconds(0, 0);
  return localInputValue(soon);
}

// "2026-03-29T02:30" in the browser's zone -> {iso: "2026-03-29T03:30:00+02:00", shifted: bool}.
// The offset is the one in force at the chosen instant (Date resolves the wall time in the browser's
// zone, DST included), never today's. A wall time skipped by a DST jump resolves to a later real time:
// that is the one sent, and `shifted` says so.
export function runAtFromLocal(value) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value || "");
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part || 0));
  const date = new Date(year, month - 1, day, hour, minute, second);
  if (Number.isNaN(date.getTime())) return null;
  const offset = -date.getTimezoneOffset(); // minutes east of UTC at that instant
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  const iso =
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const shifted = date.getHours() !== hour || date.getMinutes() !== minute || date.getDate() !== day;
  return { iso, date, shifted };
}

// Whether proactive_message:write is in force for this agent: an active grant in the user's scope or in
// the agent's own (the same two scopes the server's policy gate consults).
function hasGrant(grants, agentId) {
  return grants.some(
    (g) =>
      g.skillId === SKILL &&
      g.permissionCode === PERMISSION &&
      g.status === "active" &&
      (g.scope.type === "user" || (g.scope.type === "agent" && g.scope.agentId === agentId)),
  );
}

function StatusLabel({ status }) {
  return html`<span class="status status-${status}" data-status=${status}>${t(`job.${status}`)}</span>`;
}

function ReminderForm({ agents, access, onCreated }) {
  const [agentId, setAgentId] = useState(agents.length ? agents[0].agentId : "");
  const [when, setWhen] = useState(defaultWhen);
  const [note, setNote] = useState("");
  const [done, setDone] = useState("");
  const action = useAction();
  const zone = browserZone();
  const runAt = runAtFromLocal(when);

  useEffect(() => {
    // The agents list may change under the form (a reload): keep a valid choice.
    if (!agents.some((a) => a.agentId === agentId)) setAgentId(agents.length ? agents[0].agentId : "");
  }, [agents]);

  if (agents.length === 0) {
    return html`<div class="notice" role="note">
      <p>${t("reminders.noAgents")}</p>
      <p><a href="#/agents">${t("reminders.createAgent")}</a></p>
    </div>`;
  }

  // Why the submit is disabled, if it is: the first reason that applies, with where to fix it.
  let blocked = null;
  if (access.status === "loading") blocked = { text: t("reminders.checking") };
  else if (access.status === "error") blocked = { text: t("reminders.checkFailed") };
  else if (!access.enabled) blocked = { text: t("reminders.skillDisabled"), href: "#/skills", link: t("reminders.skillLink") };
  else if (!hasGrant(access.grants, agentId)) {
    const anyAgentGrant = access.grants.some((g) => g.skillId === SKILL && g.permissionCode === PERMISSION && g.status === "active");
    blocked = { text: t(anyAgentGrant ? "reminders.needGrantAgent" : "reminders.needGrant"), href: GRANT_LINK, link: t("reminders.grantLink") };
  }

  const submit = (event) => {
    event.preventDefault();
    setDone("");
    if (blocked || action.busy) return;
    if (!runAt) {
      action.run(async () => {
        throw { message: t("reminders.needTime"), code: "validation_error" };
      });
      return;
    }
    action.run(async () => {
      const body = { skillId: SKILL, agentId, runAt: runAt.iso };
      if (note.trim()) body.note = note;
      const job = await post("/skills/background-jobs", body);
      setDone(t("reminders.created", { time: formatTime(job.scheduledAt, zone) }));
      setNote("");
      setWhen(defaultWhen());
      onCreated(job);
    });
  };

  return html`<form class="card" onSubmit=${submit} aria-labelledby="reminder-form-title" novalidate>
    <h2 id="reminder-form-title">${t("reminders.formTitle")}</h2>
    <label for="reminder-agent">${t("reminders.agent")}</label>
    <select id="reminder-agent" value=${agentId} onChange=${(e) => setAgentId(e.currentTarget.value)}>
      ${agents.map((agent) => html`<option value=${agent.agentId}>${agent.name}</option>`)}
    </select>
    <label for="reminder-when">${t("reminders.when")}</label>
    <div class="row">
      <input id="reminder-when" type="datetime-local" step="60" required value=${when}
        aria-describedby="reminder-zone" onInput=${(e) => setWhen(e.currentTarget.value)} />
      <span id="reminder-zone" class="meta" data-testid="reminder-zone">${t("reminders.zone", { zone })}</span>
    </div>
    ${runAt && runAt.shifted && html`<p class="hint" role="status">${t("reminders.shifted", { zone, time: runAt.iso })}</p>`}
    <label for="reminder-note">${t("reminders.note")}</label>
    <textarea id="reminder-note" maxlength=${NOTE_MAX} aria-describedby="reminder-note-count" value=${note}
      onInput=${(e) => setNote(e.currentTarget.value)}></textarea>
    <p id="reminder-note-count" class="hint">${t("reminders.noteCount", { n: note.length, max: NOTE_MAX })}</p>
    <div class="row">
      <button type="submit" disabled=${Boolean(blocked) || action.busy}
        aria-describedby=${blocked ? "reminder-blocked" : undefined}>
        ${action.busy ? t("reminders.submitting") : t("reminders.submit")}
      </button>
      ${blocked &&
      html`<p id="reminder-blocked" class="notice grow" data-testid="reminder-blocked">
        ${blocked.text} ${blocked.href && html`<a href=${blocked.href}>${blocked.link}</a>`}
      </p>`}
    </div>
    <p class="hint" role="status" aria-live="polite">${done}</p>
    <${ErrorBox} error=${action.error} />
  </form>`;
}

function JobRow({ job, agentName, onChanged }) {
  const action = useAction();
  const zone = browserZone();
  const when = formatTime(job.scheduledAt, zone);
  const cancel = () =>
    action.run(async () => {
      try {
        onChanged(await post(`/skills/background-jobs/${encodeURIComponent(job.jobId)}/cancel`));
      } catch (error) {
        // job_not_cancellable: the job started meanwhile; show the error and the job's real state.
        onChanged(null);
        throw error;
      }
    });
  return html`<tr data-job=${job.jobId}>
    <td><${StatusLabel} status=${job.status} /></td>
    <td>${when}</td>
    <td>${agentName || html`<span class="meta">${t("reminders.unknownAgent")}</span>`}</td>
    <td class="note-cell">${job.note || "—"}</td>
    <td data-testid="attempts">${job.attempts}/${job.maxAttempts}</td>
    <td>${job.lastErrorCode ? html`<code data-testid="error-code">${job.lastErrorCode}</code>` : "—"}</td>
    <td>
      ${CANCELLABLE.has(job.status)
        ? html`<button type="button" class="danger" disabled=${action.busy} aria-label=${t("reminders.cancelLabel", { time: when })}
            onClick=${cancel}>${t("reminders.cancel")}</button>`
        : html`<span class="meta">—</span>`}
      <${ErrorBox} error=${action.error} />
    </td>
  </tr>`;
}

function JobList({ jobs, agents, filter, onChanged }) {
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
      ${jobs.map((job) => html`<${JobRow} key=${job.jobId} job=${job} agentName=${names.get(job.agentId)} onChanged=${onChanged} />`)}
    </tbody>
  </table>`;
}

async function loadAccess() {
  const [grants, skills] = await Promise.all([listAll("/skills/permissions"), listAll("/skills")]);
  const skill = skills.find((s) => s.skillId === SKILL);
  return { grants, enabled: Boolean(skill && skill.enabled) };
}

export default function Reminders({ ctx }) {
  const [filter, setFilter] = useState("");
  const access = useLoad(loadAccess, []);
  const jobs = useLoad(() => listAll(`/skills/background-jobs${filter ? `?status=${filter}` : ""}`, 200), [filter]);
  const [notice, setNotice] = useState("");
  const anyActive = jobs.status === "ready" && jobs.data.some((job) => ACTIVE.has(job.status));

  // While a job can still change on its own, re-read the list a few seconds after each answer (never two
  // requests at once); the timer goes with the section.
  useEffect(() => {
    if (!anyActive) return undefined;
    const timer = setTimeout(jobs.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [jobs.data, anyActive]);

  const refresh = () => {
    setNotice("");
    access.reload();
    jobs.reload();
    ctx.reloadAgents().catch(() => {});
  };

  const changed = (job) => {
    if (job && job.status === "cancelled") setNotice(t("reminders.cancelled"));
    jobs.reload();
  };

  const accessState = {
    status: access.status,
    grants: access.data ? access.data.grants : [],
    enabled: access.data ? access.data.enabled : false,
  };

  return html`<section aria-labelledby="reminders-title">
    <h1 id="reminders-title">${t("reminders.title")}</h1>
    <p class="hint">${t("reminders.intro")}</p>
    <${ReminderForm} agents=${ctx.agents} access=${accessState} onCreated=${() => jobs.reload()} />
    <div class="row">
      <h2 id="reminder-list-title" class="grow">${t("reminders.listTitle")}</h2>
      <label for="reminder-filter" class="inline">${t("reminders.filter")}</label>
      <select id="reminder-filter" value=${filter} onChange=${(e) => setFilter(e.currentTarget.value)}>
        <option value="">${t("reminders.all")}</option>
        ${STATUSES.map((s) => html`<option value=${s}>${t(`job.${s}`)}</option>`)}
      </select>
      <button type="button" class="quiet" onClick=${refresh}>${t("reminders.refresh")}</button>
    </div>
    <p class="hint" role="status" aria-live="polite">${notice}${anyActive ? ` ${t("reminders.polling", { s: POLL_MS / 1000 })}` : ""}</p>
    <${Loaded} state=${jobs}>
      ${(items) => html`<${JobList} jobs=${items} agents=${ctx.agents} filter=${filter} onChanged=${changed} />`}
    <//>
  </section>`;
}
