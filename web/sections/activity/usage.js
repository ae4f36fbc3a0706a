// The usage meter (今日模型用量): the caller's model tokens of the UTC day against the daily budget and when it
// resets, from GET /rpc/usage (one read). The numbers are the server's; the page keeps none of them.
import { get } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { formatTime, Loaded, useLoad } from "../../lib/ui.js";

export function UsageMeter({ zone }) {
  const usage = useLoad(() => get("/usage"), []);
  return html`<${Loaded} state=${usage}>
    ${(u) => {
      const reset = formatTime(u.resetsAt, zone);
      if (!u.tokensPerDay) {
        return html`<p class="hint" data-testid="usage">${t("activity.usage.unlimited", { used: u.tokensUsed })}</p>`;
      }
      const used = Math.min(u.tokensUsed, u.tokensPerDay);
      const spent = u.tokensUsed >= u.tokensPerDay;
      return html`<div class="usage" data-testid="usage">
        <label for="usage-meter">${t("activity.usage.label")}</label>
        <meter id="usage-meter" min="0" max=${u.tokensPerDay} value=${used} high=${Math.floor(u.tokensPerDay * 0.8)}
          optimum="0">${used}/${u.tokensPerDay}</meter>
        <p data-testid="usage-text">${t("activity.usage.text", { used: u.tokensUsed, budget: u.tokensPerDay, reset })}</p>
        ${spent && html`<p class="state error" role="status" data-testid="usage-spent">${t("activity.usage.spent", { reset })}</p>`}
      </div>`;
    }}
  </${Loaded}>`;
}
