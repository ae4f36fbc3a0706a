// Goal check-in reminders (目标复盘提醒): schedule a reminder for an agent at a local date and time, and
// follow every job through its states. The form stays visible without the proactive_message:write grant
// (or with the skill switched off), but its submit is disabled with the reason and a link to the switch.
import "./messages.js";
import { useEffect, useState } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Loaded, useLoad, useNotice } from "../../lib/ui.js";
import { SKILL } from "./access.js";
import { ReminderForm } from "./form.js";
import { ACTIVE, JobList, STATUSES } from "./jobs.js";

const POLL_MS = 3000;

async function loadAccess() {
  const [grants, skills] = await Promise.all([listAll("/skills/permissions"), listAll("/skills")]);
  const skill = skills.find((s) => s.skillId === SKILL);
  return { grants, enabled: Boolean(skill && skill.enabled) };
}

export default function Reminders({ ctx }) {
  const [filter, setFilter] = useState("");
  const access = useLoad(loadAccess, []);
  const jobs = useLoad(() => listAll(`/skills/background-jobs${filter ? `?status=${filter}` : ""}`, 200), [filter]);
  const [notice, setNotice] = useNotice();
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
    <${ReminderForm} agents=${ctx.agents} access=${accessState} zone=${ctx.profile.timezone} onCreated=${() => jobs.reload()} />
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
      ${(items) => html`<${JobList} jobs=${items} agents=${ctx.agents} zone=${ctx.profile.timezone} filter=${filter} onChanged=${changed} />`}
    <//>
  </section>`;
}
