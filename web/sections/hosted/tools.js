// An endpoint's tools: each with its enable and requires-approval switches, and a changed list's diff.
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Switch } from "../../lib/ui.js";
import { domId } from "./common.js";

export function DiffList({ label, names, kind }) {
  return html`<dt>${label}</dt>
    <dd data-testid=${`diff-${kind}`}>${names && names.length ? names.map((n, i) => html`${i ? ", " : ""}<code>${n}</code>`) : t("hosted.diffNone")}</dd>`;
}

// The fingerprint of the pending tool list, wherever the answer carries it.
export function pendingFingerprint(endpoint, refreshed) {
  const diff = (refreshed && refreshed.diff) || {};
  const pending = endpoint.pendingDiff || {};
  return (
    diff.fingerprint ||
    (refreshed && refreshed.fingerprint) ||
    pending.fingerprint ||
    endpoint.pendingFingerprint ||
    (endpoint.pendingSnapshot && endpoint.pendingSnapshot.fingerprint) ||
    null
  );
}

export function ToolRow({ endpoint, tool, drifted, removed, busyTool, onChange, onTry, trying }) {
  const rowId = domId("tool", endpoint.endpointId, tool.name);
  return html`<tr data-tool-row=${tool.name} id=${rowId}>
    <th scope="row"><code>${tool.name}</code>${drifted && html` <span class="tag status-retrying" data-testid="tool-drifted">${t("hosted.drifted")}</span>`}${removed &&
      html` <span class="tag status-failed" data-testid="tool-removed">${t("hosted.removed")}</span>`}</th>
    <td class="prewrap" id=${`${rowId}-desc`} data-user-content>${tool.description}</td>
    <td>
      <${Switch} id=${`${rowId}-enabled`} checked=${tool.enabled} data-switch="enabled" data-tool=${tool.name}
        label=${t("hosted.enableTool", { tool: tool.name, endpoint: endpoint.displayName })}
        disabled=${busyTool !== null} aria-busy=${busyTool === `${tool.name}:enabled` ? "true" : undefined}
        onChange=${(next) => onChange(tool, { enabled: next }, "enabled")} />
    </td>
    <td>
      <${Switch} id=${`${rowId}-approval`} checked=${tool.requiresApproval} data-switch="requiresApproval" data-tool=${tool.name}
        label=${t("hosted.approvalTool", { tool: tool.name, endpoint: endpoint.displayName })}
        disabled=${busyTool !== null} aria-busy=${busyTool === `${tool.name}:requiresApproval` ? "true" : undefined}
        onChange=${(next) => onChange(tool, { requiresApproval: next }, "requiresApproval")} />
    </td>
    <td>
      <button type="button" class="quiet" id=${`${rowId}-try`} aria-expanded=${trying ? "true" : "false"}
        aria-label=${t("hosted.tryLabel", { tool: tool.name })} onClick=${() => onTry(tool)}>${t("hosted.toolTry")}</button>
    </td>
  </tr>`;
}
