// Scheduling a reminder: the agent, the local time (sent as UTC) and the note.
import { useEffect, useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, formatTime, useAction, useNotice, zonedInputValue, zonedInstant } from "../../lib/ui.js";
import { GRANT_LINK, hasGrant, PERMISSION, SKILL } from "./access.js";

const DEFAULT_LEAD_MINUTES = 5;

// Five minutes from now, as the date field holds it, in the profile's zone.
function defaultWhen(zone) {
  const soon = Math.floor((Date.now() + DEFAULT_LEAD_MINUTES * 60_000) / 60_000) * 60_000;
  return zonedInputValue(soon, zone);
}

// "2026-03-29T02:30" in the profile's zone -> {iso: "2026-03-29T03:30:00+02:00", shifted: bool} (lib/ui.js,
// zonedInstant): the offset in force at the chosen instant, never today's; a wall time skipped by a DST jump
// resolves to a later real time, which is the one sent, and `shifted` says so.
export function runAtFromLocal(value, zone) {
  return zonedInstant(value, zone);
}

export function ReminderForm({ agents, access, zone, onCreated }) {
  const [agentId, setAgentId] = useState(agents.length ? agents[0].agentId : "");
  const [when, setWhen] = useState(() => defaultWhen(zone));
  const [note, setNote] = useState("");
  const [done, setDone] = useNotice();
  const action = useAction();
  const runAt = runAtFromLocal(when, zone);

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
      setWhen(defaultWhen(zone));
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
    ${runAt && !runAt.shifted && html`<p class="hint" data-testid="reminder-when-text">${t("reminders.whenText", { time: formatTime(new Date(runAt.ms).toISOString(), zone) })}</p>`}
    ${runAt && runAt.shifted && html`<p class="hint" role="status">${t("reminders.shifted", { zone, time: runAt.iso })}</p>`}
    <label for="reminder-note">${t("reminders.note")}</label>
    <textarea id="reminder-note" data-user-content maxlength=${limits().reminderNote} aria-describedby="reminder-note-count" value=${note}
      onInput=${(e) => setNote(e.currentTarget.value)}></textarea>
    <p id="reminder-note-count" class="hint">${t("reminders.noteCount", { n: note.length, max: limits().reminderNote })}</p>
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
