// Automation jobs (自动化任务): the default daily memory job and the user's own jobs: create, edit
// (only the changed fields are sent), pause and resume, delete (with an in-page confirm step), and each
// job's runs. Every run goes through the memory-extraction skill: without its memory:write grant the runs
// are skipped, which the default job says, with the grant's switch right next to it.
import "./messages.js";
import { useState } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, Loaded, useLoad, useNotice } from "../../lib/ui.js";
import { RUNNER_SKILL } from "./access.js";
import { JobCard } from "./card.js";
import { JobForm, KNOWN_TOOLS } from "./form.js";

async function loadAccess() {
  const [grants, skills] = await Promise.all([listAll("/skills/permissions"), listAll("/skills")]);
  const skill = skills.find((s) => s.skillId === RUNNER_SKILL);
  return { grants, enabled: Boolean(skill && skill.enabled) };
}

export default function Automation({ ctx }) {
  const jobs = useLoad(() => listAll("/automation-jobs"), []);
  const access = useLoad(loadAccess, []);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useNotice();

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
