// Activity (活动): the day's model usage against the budget (the usage meter), the user's recent runs, their audit trail, and the evaluation summary (评测摘要).
// Runs and audit events hold no text (no message, memory or note): codes, ids, counts and times only, so
// that is all there is to show. The evaluation summary is data shipped with the page (web/data/evals.json,
// written by `make evals`), fetched only when this section opens.
import "./messages.js";
import { useState } from "preact/hooks";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Evals } from "./eval_summary.js";
import { Lists } from "./lists.js";
import { UsageMeter } from "./usage.js";

export default function Activity({ ctx }) {
  const [generation, setGeneration] = useState(0);
  return html`<section aria-labelledby="activity-title">
    <h1 id="activity-title">${t("activity.title")}</h1>
    <p class="hint">${t("activity.intro")}</p>
    <h2 id="activity-usage">${t("activity.usage.title")}</h2>
    <${UsageMeter} key=${`usage-${generation}`} zone=${ctx.profile.timezone} />
    <${Lists} key=${generation} zone=${ctx.profile.timezone} agents=${ctx.agents} onRefresh=${() => (ctx.reloadAgents(), setGeneration((n) => n + 1))} />
    <h2 id="activity-evals">${t("activity.evals")}</h2>
    <${Evals} />
  </section>`;
}
