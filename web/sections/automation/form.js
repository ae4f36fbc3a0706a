// Creating or editing an automation job: title, schedule, zone, agent, prompt and tools.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { patch, post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, useAction } from "../../lib/ui.js";

// No route lists the registered tool names; these are the ones the default job's config names. Other
// names can be typed, and the server's unknown_tool answer lists the registered ones.
export const KNOWN_TOOLS = ["memory_write", "memory_forget"];

const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7];

function splitTools(text) {
  return text
    .split(/[,，\s]+/)
    .map((name) => name.trim())
    .filter(Boolean);
}

// The create and edit form. On edit only the fields that differ from the job are sent (config as a
// whole, since the API takes prompt and tools together).
export function JobForm({ job, ctx, knownTools, onDone, onCancel }) {
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
    <input id=${`${prefix}-name`} maxlength=${limits().automationTitle} value=${title} onInput=${(e) => setTitle(e.currentTarget.value)} />
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
        <input id=${`${prefix}-zone`} value=${timezone} maxlength=${limits().timezone} onInput=${(e) => setTimezone(e.currentTarget.value)} />
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
    <textarea id=${`${prefix}-prompt`} maxlength=${limits().automationPrompt} aria-describedby=${`${prefix}-prompt-count`} value=${prompt}
      onInput=${(e) => setPrompt(e.currentTarget.value)}></textarea>
    <p id=${`${prefix}-prompt-count`} class="hint">${t("auto.promptCount", { n: prompt.length, max: limits().automationPrompt })}</p>
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
