// One skill's permissions in a scope: each permission's row with its grant switch and state.
import { useState } from "preact/hooks";
import { patch } from "../../lib/api.js";
import { ask } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { permissionName, riskName, skillName } from "../../lib/names.js";
import { ErrorBox, formatTime, Switch, useNotice } from "../../lib/ui.js";
import { NarrowingForm, NarrowingSummary } from "./narrowing.js";

export const USER_SCOPE = "";

const major = (version) => String(version || "").split(".")[0];

function sameScope(grant, agentId) {
  return agentId === USER_SCOPE
    ? grant.scope.type === "user"
    : grant.scope.type === "agent" && grant.scope.agentId === agentId;
}

// The grant record of one skill, code and scope (the server keeps one per key), or undefined.
function findGrant(grants, skillId, code, agentId) {
  return grants.find((g) => g.skillId === skillId && g.permissionCode === code && sameScope(g, agentId));
}

// A grant holds when it is active and was made for the same major version (as the server's catalog counts it).
function holds(grant, skill) {
  return Boolean(grant && grant.status === "active" && major(grant.skillVersion) === major(skill.version));
}

function domId(...parts) {
  return parts.join("-").replace(/[^A-Za-z0-9_-]/g, "_");
}

function GrantState({ grant, skill, zone }) {
  if (!grant) return html`<span class="status" data-testid="grant-state" data-state="none">${t("perms.never")}</span>`;
  if (grant.status === "revoked") {
    return html`<span class="status status-revoked" data-testid="grant-state" data-state="revoked">
      ${t("perms.revoked", { time: formatTime(grant.revokedAt || grant.updatedAt, zone) })}</span>`;
  }
  return html`<span class="status status-active" data-testid="grant-state" data-state="active">
      ${t("perms.active", { time: formatTime(grant.grantedAt, zone), version: grant.skillVersion })}</span>
    ${!holds(grant, skill) &&
    html` <span class="notice">${t("perms.oldVersion", { version: grant.skillVersion, current: skill.version })}</span>`}`;
}

function PermissionRow({ skill, permission, grants, endpoints, agentId, agents, zone, highlighted, onGrant }) {
  const [pending, setPending] = useState(null); // the value asked for, while the server answers
  const [error, setError] = useState(null);
  const [done, setDone] = useNotice();
  const grant = findGrant(grants, skill.skillId, permission.code, agentId);
  const checked = pending ?? holds(grant, skill);
  const agent = agents.find((a) => a.agentId === agentId);
  const scopeText = agentId === USER_SCOPE ? t("perms.userWide") : t("perms.agentNamed", { name: agent ? agent.name : agentId });
  const name = permissionName(permission.code);
  const rowId = domId("perm", skill.skillId, permission.code);
  const userGrant = agentId !== USER_SCOPE && holds(findGrant(grants, skill.skillId, permission.code, USER_SCOPE), skill);
  const agentNames = agentId === USER_SCOPE
    ? grants
        .filter((g) => g.skillId === skill.skillId && g.permissionCode === permission.code && g.scope.type === "agent" && holds(g, skill))
        .map((g) => (agents.find((a) => a.agentId === g.scope.agentId) || { name: t("perms.unknownAgent") }).name)
    : [];

  const toggle = async (next) => {
    if (pending !== null) return;
    if (!next && !(await ask("revoke", { name, scope: scopeText }))) return;
    setPending(next);
    setError(null);
    setDone("");
    try {
      const scope = agentId === USER_SCOPE ? { type: "user" } : { type: "agent", agentId };
      const answer = await patch("/skills/permissions", {
        skillId: skill.skillId,
        permissionCode: permission.code,
        scope,
        granted: next,
      });
      onGrant(answer);
      setDone(t(answer.status === "active" ? "perms.granted" : "perms.revokedNow", { name, scope: scopeText }));
    } catch (failure) {
      setError(failure); // the switch goes back to what the server holds
    } finally {
      setPending(null);
    }
  };

  return html`<div class=${`perm-row${highlighted ? " highlight" : ""}`} id=${rowId} data-permission-row=${permission.code}>
    <div class="row">
      <div class="grow">
        <h3 class="perm-name">${name} <code>${permission.code}</code></h3>
        <p class="meta" id=${`${rowId}-facts`}>
          ${t("perms.risk")}: <span class=${`tag risk-${permission.riskLevel}`} data-testid="risk">${riskName(permission.riskLevel)}</span>${" · "}
          ${t("perms.approval")}: <span data-testid="approval">${t(`approval.${permission.approvalMode}`)}</span>${" · "}
          ${t("perms.scopeLabel")}: <span data-testid="scope">${scopeText}</span>
        </p>
      </div>
      <${Switch}
        id=${`${rowId}-switch`}
        checked=${checked}
        label=${t("perms.switch", { skill: skillName(skill), name, code: permission.code, scope: scopeText })}
        describedBy=${`${rowId}-facts ${rowId}-state`}
        data-permission=${permission.code}
        aria-busy=${pending !== null ? "true" : undefined}
        onChange=${toggle}
      />
    </div>
    <p class="meta" id=${`${rowId}-state`}>
      <${GrantState} grant=${grant} skill=${skill} zone=${zone} />
      ${userGrant && html` <span data-testid="via-user">${t("perms.viaUser")}</span>`}
      ${agentNames.length > 0 && html` <span data-testid="agent-grants">${t("perms.agentGrants", { names: agentNames.join(", ") })}</span>`}
    </p>
    ${grant && grant.status === "active" && html`<${NarrowingSummary} scope=${grant.scope} agents=${agents} endpoints=${endpoints} />`}
    ${permission.approvalMode !== "none" && html`<${NarrowingForm}
      key=${agentId}
      skill=${skill}
      permission=${permission}
      agentId=${agentId}
      agents=${agents}
      rowId=${rowId}
      onGrant=${onGrant}
      onDone=${() => setDone(t("narrow.granted", { name, scope: scopeText }))}
    />`}
    ${permission.approvalMode === "per_operation" && html`<p class="hint">${t("perms.perOperation")}</p>`}
    <p class="hint" role="status" aria-live="polite">${done}</p>
    <${ErrorBox} error=${error} />
  </div>`;
}

export function SkillPermissions({ skill, grants, endpoints, agentId, agents, zone, target, onGrant }) {
  const headingId = domId("perms", skill.skillId);
  return html`<article class="card" aria-labelledby=${headingId} data-skill=${skill.skillId}>
    <h2 id=${headingId}>${skillName(skill)} <span class="meta"><code>${skill.skillId}</code> · ${skill.version}</span></h2>
    ${!skill.enabled &&
    html`<p class="notice" data-testid="skill-disabled">${t("perms.skillDisabled")} <a href="#/skills">${t("perms.skillLink")}</a></p>`}
    ${skill.permissions.map(
      (permission) => html`<${PermissionRow}
        key=${`${permission.code}|${agentId}`}
        skill=${skill}
        permission=${permission}
        grants=${grants}
        endpoints=${endpoints}
        agentId=${agentId}
        agents=${agents}
        zone=${zone}
        highlighted=${target.skill === skill.skillId && (!target.permission || target.permission === permission.code)}
        onGrant=${onGrant}
      />`,
    )}
  </article>`;
}
