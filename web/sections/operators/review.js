// The review queue: each checked release with what it asks for (permissions and risk levels, hosted endpoints),
// the publisher's texts as quoted data, the automatic checks' report, and the decision with a reason.
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, Loaded, useAction } from "../../lib/ui.js";

function Report({ report }) {
  return html`<ul class="plain report" data-testid="report">
    ${report.results.map(
      (result) => html`<li data-check=${result.check} data-passed=${result.passed ? "true" : "false"}>
        ${t(`operators.check.${result.check}`)}: <strong>${t(result.passed ? "operators.passed" : "operators.failed")}</strong>
        ${result.cases > 0 && html` · ${t("operators.cases", { n: result.cases })}`}
        ${result.findings.length > 0 &&
        html`<ul>${result.findings.map((f) => html`<li><code>${f.path}</code> · <code>${f.rule}</code></li>`)}</ul>`}
      </li>`,
    )}
  </ul>`;
}

function ReleaseItem({ release, onDecided }) {
  const action = useAction();
  const [reason, setReason] = useState("");
  const id = `op-release-${release.releaseId}`;
  const decide = (decision) =>
    action.run(async () => {
      const after = await post(`/admin/releases/${encodeURIComponent(release.releaseId)}/decision`, { decision, reason });
      // An approved version newer than the published one starts its canary (state approved): not published yet.
      const said = decision !== "approve" ? "operators.rejected" : after.state === "approved" ? "operators.canary" : "operators.approved";
      onDecided(after, t(said, { skill: after.skillId, version: after.version }));
    });
  return html`<li class="card" data-release=${release.releaseId} aria-labelledby=${`${id}-title`}>
    <h3 id=${`${id}-title`}><code>${release.skillId}</code> <code>${release.version}</code></h3>
    <dl class="facts">
      <dt>${t("operators.publisher")}</dt><dd><code>${release.publisherId}</code> · ${t(`operators.trust.${release.trustLevel}`)}</dd>
      <dt>${t("operators.permissions")}</dt>
      <dd data-testid="release-permissions">${release.permissions.length === 0
        ? t("operators.noPermissions")
        : release.permissions.map((p) => html`<span class="badge"><code>${p.code}</code> ${p.riskLevel} · ${p.approvalMode}</span> `)}</dd>
    </dl>
    ${release.remotes > 0 && html`<p class="meta">${t("operators.remotes", { n: release.remotes })}</p>`}
    ${(release.codeTools || []).length > 0 &&
    html`<ul class="plain" data-testid="release-code-tools" aria-label=${t("operators.codeTools")}>
      ${release.codeTools.map(
        (tool) => html`<li data-code-tool=${tool.toolId}>${t("operators.codeTool")} <code>${tool.toolId}</code> ·
          <code>fuel ${tool.limits.fuel} · memory ${tool.limits.memoryBytes} B · ${tool.limits.timeoutMs} ms · output ${tool.limits.outputBytes} B · host calls ${tool.limits.hostCalls}</code>
          ${tool.hostFunctions.length > 0 && html` · ${tool.hostFunctions.map((f) => html`<code>${f}</code> `)}`}</li>`,
      )}
    </ul>`}
    <p class="meta">${t("operators.publisherText")}</p>
    <blockquote class="quoted"><p>${release.displayName}</p><p>${release.description}</p></blockquote>
    <h4>${t("operators.report")}</h4>
    <${Report} report=${release.report} />
    <label for=${`${id}-reason`}>${t("operators.reason")}</label>
    <textarea id=${`${id}-reason`} rows="2" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)}></textarea>
    <${ErrorBox} error=${action.error} />
    <div class="row actions">
      <button type="button" disabled=${action.busy || !reason.trim()} onClick=${() => decide("approve")}>${t("operators.approve")}</button>
      <button type="button" class="danger" disabled=${action.busy || !reason.trim()} onClick=${() => decide("reject")}>${t("operators.reject")}</button>
    </div>
  </li>`;
}

export function Review({ state, onDecided }) {
  return html`<section aria-labelledby="operators-queue-title">
    <h2 id="operators-queue-title">${t("operators.queue")}</h2>
    <${Loaded} state=${state}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("operators.queueEmpty")} />`
          : html`<ul class="plain" data-testid="review-queue">${items.map((r) => html`<${ReleaseItem} key=${r.releaseId} release=${r} onDecided=${onDecided} />`)}</ul>`}
    <//>
  </section>`;
}
