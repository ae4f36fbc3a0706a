// The risk levels' legend (L0..L4) under the permission list.
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { RISK_LEVELS, riskName } from "../../lib/names.js";

export function RiskLegend() {
  return html`<details class="legend">
    <summary>${t("perms.risks")}</summary>
    <dl class="facts">
      ${RISK_LEVELS.map((level) => html`<dt><span class=${`tag risk-${level}`}>${riskName(level)}</span></dt><dd>${t(`riskInfo.${level}`)}</dd>`)}
    </dl>
  </details>`;
}
