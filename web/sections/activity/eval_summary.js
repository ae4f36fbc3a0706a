// The evaluation summary the page ships (data/evals.json).
import { ApiError } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { skillName } from "../../lib/names.js";
import { Loaded, useLoad } from "../../lib/ui.js";

async function loadEvals() {
  let response;
  try {
    response = await fetch("/skills/data/evals.json", { cache: "no-cache" });
  } catch {
    throw new ApiError(0, "network", t("error.network"), {}, true);
  }
  if (!response.ok) throw new ApiError(response.status, "evals_unavailable", t("activity.evalsFailed"), {}, true);
  return response.json();
}

function score(value, threshold) {
  const text = value.toFixed(3);
  if (value >= threshold) return text;
  return html`<span class="below">${text} (${t("activity.belowThreshold")})</span>`;
}

export function Evals() {
  const evals = useLoad(loadEvals, []);
  return html`<${Loaded} state=${evals}>
    ${(data) => html`<p class="hint">
        ${t("activity.evalsIntro", { cases: data.selector.cases, threshold: data.threshold })}
      </p>
      <div class="table-wrap" role="region" tabindex="0" aria-label=${t("activity.evalsTable")}>
        <table aria-label=${t("activity.evalsTable")} data-testid="evals">
          <thead>
            <tr>
              <th scope="col">${t("activity.col.skill")}</th>
              <th scope="col" class="num">${t("activity.col.precision")}</th>
              <th scope="col" class="num">${t("activity.col.recall")}</th>
              <th scope="col" class="num">${t("activity.col.cases")}</th>
            </tr>
          </thead>
          <tbody>
            ${data.selector.skills.map(
              (row) => html`<tr key=${row.skillId} data-skill=${row.skillId}>
                <th scope="row"><span data-skill-id=${row.skillId}>${skillName({ skillId: row.skillId, name: row.skillId })}</span></th>
                <td class="num" data-testid="precision">${score(row.precision, data.threshold)}</td>
                <td class="num" data-testid="recall">${score(row.recall, data.threshold)}</td>
                <td class="num">${row.cases}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p data-testid="payload-evals" class=${data.payload.right < data.payload.total ? "below" : undefined}>
        ${t("activity.payload", { skill: skillName({ skillId: data.payload.skillId, name: data.payload.skillId }), right: data.payload.right, total: data.payload.total })}
      </p>`}
  <//>`;
}
