// One endpoint: its host, masked URL, status and tools; refresh, accept a changed list, enable, delete.
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../../lib/api.js";
import { ask, confirmAction } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, ErrorBox, focusAfterRender, formatTime, useAction, useNotice } from "../../lib/ui.js";
import { domId, endpointPath } from "./common.js";
import { DiffList, pendingFingerprint, ToolRow } from "./tools.js";
import { TryIt } from "./try.js";

export function EndpointCard({ endpoint, zone, onReplace, onDeleted, onApprovalAsked }) {
  const [busyTool, setBusyTool] = useState(null);
  const [notice, setNotice] = useNotice();
  const [refreshed, setRefreshed] = useState(null);
  const [trying, setTrying] = useState(null);
  const [refreshing, setRefreshing] = useState(false);
  const action = useAction();
  const cardId = domId("endpoint", endpoint.endpointId);
  const path = endpointPath(endpoint);

  // A version conflict re-reads the endpoint and says so; other errors stay in the error box.
  const guarded = (work) =>
    action.run(async () => {
      setNotice("");
      try {
        await work();
      } catch (failure) {
        if (failure.code === "version_conflict") {
          const fresh = await get(path);
          onReplace(fresh);
          setNotice(t("hosted.conflict", { v: fresh.version }));
          return;
        }
        throw failure;
      }
    });

  const changeTool = (tool, change, which) => {
    if (busyTool !== null) return;
    setBusyTool(`${tool.name}:${which}`);
    guarded(async () => {
      const updated = await patch(path, { expectedVersion: endpoint.version, tools: [{ name: tool.name, ...change }] });
      onReplace(updated);
      setNotice(t("hosted.toolSaved", { tool: tool.name }));
    }).finally(() => {
      setBusyTool(null);
      focusAfterRender(`${domId("tool", endpoint.endpointId, tool.name)}-${which === "enabled" ? "enabled" : "approval"}`);
    });
  };

  const setStatus = async (status) => {
    if (status === "disabled" && !(await ask("disableEndpoint", { name: endpoint.displayName }))) return;
    await guarded(async () => {
      const updated = await patch(path, { expectedVersion: endpoint.version, status });
      onReplace(updated);
      setNotice(t(status === "active" ? "hosted.enabledNow" : "hosted.disabledNow", { name: updated.displayName }));
      focusAfterRender(`${cardId}-${status === "active" ? "disable" : "enable"}`);
    });
  };

  const refresh = () => {
    setRefreshing(true);
    guarded(async () => {
      const answer = await post(`${path}/refresh`, {});
      setRefreshed(answer);
      onReplace(await get(path));
      setNotice(answer.changed ? t("hosted.changed") : t("hosted.unchanged"));
    }).finally(() => setRefreshing(false));
  };

  const fingerprint = pendingFingerprint(endpoint, refreshed);
  const accept = () =>
    guarded(async () => {
      const updated = await post(`${path}/snapshot/accept`, { expectedVersion: endpoint.version, fingerprint });
      onReplace(updated);
      setRefreshed(null);
      setNotice(t("hosted.accepted"));
    });

  const remove = async () => {
    const asked = {
      title: t("confirm.deleteEndpoint.title"),
      body: t("hosted.confirmDelete", { name: endpoint.displayName }),
      confirm: t("hosted.confirmDeleteYes"),
      keep: t("hosted.confirmDeleteNo"),
    };
    if (!(await confirmAction(asked))) return;
    await action.run(async () => {
      await del(path);
      onDeleted(endpoint);
    });
  };

  const diff = endpoint.pendingDiff || (refreshed && refreshed.changed && refreshed.diff) || null;
  const drifting = endpoint.status === "drift_pending" || Boolean(diff);
  const driftedTools = new Set(diff ? [...(diff.added || []), ...(diff.changed || [])] : []);
  const tools = endpoint.snapshot.tools;
  const openTool = trying && tools.find((tool) => tool.name === trying);

  return html`<article class="card endpoint" aria-labelledby=${`${cardId}-title`} data-endpoint=${endpoint.name}
    data-endpoint-id=${endpoint.endpointId}>
    <div class="row">
      <h3 id=${`${cardId}-title`} class="grow">${endpoint.displayName} <span class="meta"><code>${endpoint.name}</code></span></h3>
      <span class=${`tag status status-${endpoint.status}`} data-testid="endpoint-status" data-status=${endpoint.status}>
        ${t(`hosted.status.${endpoint.status}`)}</span>
      <span class="meta" data-testid="endpoint-version">${t("hosted.version", { v: endpoint.version })}</span>
    </div>
    <dl class="facts">
      <dt>${t("hosted.host")}</dt><dd data-testid="endpoint-host"><code>${endpoint.host}</code></dd>
      <dt>${t("hosted.urlMasked")}</dt><dd data-testid="endpoint-url"><code>${endpoint.urlMasked}</code></dd>
      <dt>${t("hosted.snapshotAt")}</dt><dd>${formatTime(endpoint.snapshot.takenAt, zone)}</dd>
      <dt>${t("hosted.fingerprint")}</dt><dd><code title=${endpoint.snapshot.fingerprint}>${endpoint.snapshot.fingerprint.slice(0, 12)}…</code></dd>
    </dl>
    <div class="row actions">
      ${endpoint.status === "disabled"
        ? html`<button type="button" id=${`${cardId}-enable`} disabled=${action.busy} onClick=${() => setStatus("active")}>${t("hosted.enable")}</button>`
        : html`<button type="button" class="quiet" id=${`${cardId}-disable`} disabled=${action.busy} onClick=${() => setStatus("disabled")}>${t("hosted.disable")}</button>`}
      <button type="button" class="quiet" id=${`${cardId}-refresh`} disabled=${action.busy} onClick=${refresh}>
        ${refreshing ? t("hosted.refreshing") : t("hosted.refresh")}</button>
      <button type="button" class="danger" id=${`${cardId}-delete`} disabled=${action.busy}
        aria-label=${t("hosted.deleteLabel", { name: endpoint.displayName })} onClick=${remove}>${t("hosted.delete")}</button>
    </div>
    <p class="hint" role="status" aria-live="polite" data-testid="endpoint-notice">${notice}</p>
    <${ErrorBox} error=${action.error} />
    ${drifting && diff &&
    html`<section class="notice drift" aria-labelledby=${`${cardId}-diff`} data-testid="drift">
      <h4 id=${`${cardId}-diff`}>${t("hosted.diff")}</h4>
      <dl class="facts">
        <${DiffList} label=${t("hosted.diffAdded")} names=${diff.added} kind="added" />
        <${DiffList} label=${t("hosted.diffRemoved")} names=${diff.removed} kind="removed" />
        <${DiffList} label=${t("hosted.diffChanged")} names=${diff.changed} kind="changed" />
      </dl>
      <p class="hint" id=${`${cardId}-accept-hint`}>${fingerprint ? t("hosted.acceptHint") : t("hosted.noFingerprint")}</p>
      <button type="button" id=${`${cardId}-accept`} disabled=${action.busy || !fingerprint} aria-describedby=${`${cardId}-accept-hint`}
        onClick=${accept}>${t("hosted.accept")}</button>
    </section>`}
    <h4>${t("hosted.tools")}</h4>
    ${tools.length === 0
      ? html`<${Empty} text=${t("hosted.noTools")} />`
      : html`<div class="table-wrap" role="region" tabindex="0" aria-label=${t("hosted.tools")}><table>
          <thead><tr>
            <th scope="col">${t("hosted.toolName")}</th><th scope="col">${t("hosted.toolDescription")}</th>
            <th scope="col">${t("hosted.toolEnabled")}</th><th scope="col">${t("hosted.toolApproval")}</th><th scope="col"><span class="visually-hidden">${t("hosted.toolTry")}</span></th>
          </tr></thead>
          <tbody>
            ${tools.map(
              (tool) => html`<${ToolRow} key=${tool.name} endpoint=${endpoint} tool=${tool} drifted=${driftedTools.has(tool.name)}
                removed=${Boolean(diff && (diff.removed || []).includes(tool.name))}
                busyTool=${busyTool} trying=${trying === tool.name} onChange=${changeTool}
                onTry=${(picked) => setTrying(trying === picked.name ? null : picked.name)} />`,
            )}
          </tbody>
        </table></div>`}
    ${openTool &&
    html`<${TryIt} key=${openTool.name} endpoint=${endpoint} tool=${openTool} onApprovalAsked=${onApprovalAsked}
      onClose=${() => {
        const id = `${domId("tool", endpoint.endpointId, openTool.name)}-try`;
        setTrying(null);
        focusAfterRender(id);
      }} />`}
  </article>`;
}
