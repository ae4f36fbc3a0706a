// Permissions (执行权限): one switch per permission a skill declares, apart from the skill's enable switch,
// with its risk level, approval mode and scope. The scope is the whole user (every agent) or one agent,
// chosen above the list; each switch grants or revokes in that scope and shows what the server answered.
// `#/permissions?skill=<id>&permission=<code>[&agent=<agentId>]` scrolls to that switch, focuses it and
// highlights it (the reminders section links here when its permission is missing).
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { listAll, patch } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { permissionName, RISK_LEVELS, riskName, skillName } from "../lib/names.js";
import { browserZone, Empty, ErrorBox, formatTime, Loaded, Switch, useLoad } from "../lib/ui.js";

const USER_SCOPE = "";

register({
  zh: {
    "perms.title": "执行权限",
    "perms.intro": "每项权限使用独立开关授权或撤销，与技能的启用开关互不影响。权限默认不授予。",
    "perms.scope": "授权范围",
    "perms.scopeUser": "整个用户（所有 Agent）",
    "perms.scopeAgent": "Agent：{name}",
    "perms.scopeHint": "用户级授权对你的所有 Agent 生效；Agent 级授权只对所选的 Agent 生效。",
    "perms.noAgents": "还没有 Agent，目前只能按整个用户授权。",
    "perms.risks": "风险等级",
    "perms.empty": "没有技能声明需要权限。",
    "perms.switch": "授予 {name}（{code}），范围：{scope}",
    "perms.risk": "风险",
    "perms.approval": "审批方式",
    "perms.scopeLabel": "范围",
    "perms.userWide": "整个用户",
    "perms.agentNamed": "Agent {name}",
    "perms.unknownAgent": "（已不存在的 Agent）",
    "perms.active": "已授予：{time}（版本 {version}）",
    "perms.revoked": "已撤销：{time}",
    "perms.never": "未授予",
    "perms.oldVersion": "这条授权来自版本 {version}，对当前版本 {current} 不再生效，请重新授予。",
    "perms.viaUser": "用户级授权已对所有 Agent 生效。",
    "perms.agentGrants": "单独授权的 Agent：{names}",
    "perms.granted": "已授予 {name}（{scope}）。",
    "perms.revokedNow": "已撤销 {name}（{scope}）。",
    "perms.skillDisabled": "这个技能已停用：即使已授权，它也不会执行。",
    "perms.skillLink": "前往技能启用",
    "perms.perOperation": "每次调用还需要单独审批。",
  },
  en: {
    "perms.title": "Permissions",
    "perms.intro": "Each permission has its own switch to grant or revoke it, apart from the skill's enable switch. Nothing is granted by default.",
    "perms.scope": "Grant scope",
    "perms.scopeUser": "The whole user (every agent)",
    "perms.scopeAgent": "Agent: {name}",
    "perms.scopeHint": "A user grant holds for all your agents; an agent grant holds for the chosen agent only.",
    "perms.noAgents": "There is no agent yet, so grants can only be made for the whole user.",
    "perms.risks": "Risk levels",
    "perms.empty": "No skill declares a permission.",
    "perms.switch": "Grant {name} ({code}), scope: {scope}",
    "perms.risk": "Risk",
    "perms.approval": "Approval",
    "perms.scopeLabel": "Scope",
    "perms.userWide": "the whole user",
    "perms.agentNamed": "agent {name}",
    "perms.unknownAgent": "(an agent that no longer exists)",
    "perms.active": "Granted {time} (version {version})",
    "perms.revoked": "Revoked {time}",
    "perms.never": "Not granted",
    "perms.oldVersion": "This grant was made for version {version} and does not hold for the current version {current}; grant it again.",
    "perms.viaUser": "A user grant already holds for every agent.",
    "perms.agentGrants": "Agents granted one by one: {names}",
    "perms.granted": "Granted {name} ({scope}).",
    "perms.revokedNow": "Revoked {name} ({scope}).",
    "perms.skillDisabled": "This skill is switched off: it does not run, granted or not.",
    "perms.skillLink": "Enable it under Skills",
    "perms.perOperation": "Each call also needs its own approval.",
  },
});

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

function PermissionRow({ skill, permission, grants, agentId, agents, highlighted, onGrant }) {
  const [pending, setPending] = useState(null); // the value asked for, while the server answers
  const [error, setError] = useState(null);
  const [done, setDone] = useState("");
  const zone = browserZone();
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
        label=${t("perms.switch", { name, code: permission.code, scope: scopeText })}
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
    ${permission.approvalMode === "per_operation" && html`<p class="hint">${t("perms.perOperation")}</p>`}
    <p class="hint" role="status" aria-live="polite">${done}</p>
    <${ErrorBox} error=${error} />
  </div>`;
}

function SkillPermissions({ skill, grants, agentId, agents, target, onGrant }) {
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
        agentId=${agentId}
        agents=${agents}
        highlighted=${target.skill === skill.skillId && (!target.permission || target.permission === permission.code)}
        onGrant=${onGrant}
      />`,
    )}
  </article>`;
}

function RiskLegend() {
  return html`<details class="legend">
    <summary>${t("perms.risks")}</summary>
    <dl class="facts">
      ${RISK_LEVELS.map((level) => html`<dt><span class=${`tag risk-${level}`}>${riskName(level)}</span></dt><dd>${t(`riskInfo.${level}`)}</dd>`)}
    </dl>
  </details>`;
}

async function loadAll() {
  const [skills, grants] = await Promise.all([listAll("/skills"), listAll("/skills/permissions")]);
  return { skills, grants };
}

export default function Permissions({ ctx, route }) {
  const params = route ? route.params : new URLSearchParams();
  const target = { skill: params.get("skill") || "", permission: params.get("permission") || "" };
  const wantedAgent = params.get("agent") || USER_SCOPE;
  const agents = ctx.agents;
  const linkedScope = agents.some((a) => a.agentId === wantedAgent) ? wantedAgent : USER_SCOPE;
  const [agentId, setAgentId] = useState(linkedScope);
  const state = useLoad(loadAll, []);
  const focused = useRef("");

  // A later link naming an agent (or none) chooses its scope. Not on the first render: the state starts there,
  // and a choice the person made before an effect ran must not be undone by it.
  const linked = useRef(wantedAgent);
  useLayoutEffect(() => {
    if (linked.current === wantedAgent) return;
    linked.current = wantedAgent;
    setAgentId(linkedScope);
  }, [wantedAgent]);

  useEffect(() => {
    // An agent that went away (another tab) leaves the user scope chosen, never a dangling one.
    if (agentId !== USER_SCOPE && !agents.some((a) => a.agentId === agentId)) setAgentId(USER_SCOPE);
  }, [agents]);

  // Once the list is there in the linked scope, bring the linked switch into view and focus it (once per link).
  const targetKey = `${target.skill}|${target.permission}|${linkedScope}`;
  useEffect(() => {
    if (state.status !== "ready" || !target.skill || agentId !== linkedScope || focused.current === targetKey) return;
    const card = document.querySelector(`[data-skill="${CSS.escape(target.skill)}"]`);
    if (!card) return;
    const wanted = target.permission
      ? card.querySelector(`[data-permission="${CSS.escape(target.permission)}"]`)
      : card.querySelector("[data-permission]");
    const element = wanted || card.querySelector("[data-permission]");
    if (!element) return;
    focused.current = targetKey;
    element.scrollIntoView({ block: "center" });
    element.focus({ preventScroll: true, focusVisible: true });
  }, [state.status, targetKey, agentId]);

  const replace = (grant) =>
    state.setData((data) => {
      const others = data.grants.filter((g) => g.grantId !== grant.grantId &&
        !(g.skillId === grant.skillId && g.permissionCode === grant.permissionCode &&
          g.scope.type === grant.scope.type && (g.scope.agentId || "") === (grant.scope.agentId || "")));
      return { ...data, grants: [...others, grant] };
    });

  return html`<section aria-labelledby="perms-title">
    <h1 id="perms-title">${t("perms.title")}</h1>
    <p class="hint">${t("perms.intro")}</p>
    <div class="card">
      <label for="perm-scope">${t("perms.scope")}</label>
      <select id="perm-scope" value=${agentId} aria-describedby="perm-scope-hint" onChange=${(e) => setAgentId(e.currentTarget.value)}>
        <option value=${USER_SCOPE}>${t("perms.scopeUser")}</option>
        ${agents.map((agent) => html`<option value=${agent.agentId}>${t("perms.scopeAgent", { name: agent.name })}</option>`)}
      </select>
      <p class="hint" id="perm-scope-hint">${agents.length === 0 ? t("perms.noAgents") : t("perms.scopeHint")}</p>
      <${RiskLegend} />
    </div>
    <${Loaded} state=${state}>
      ${({ skills, grants }) => {
        const declaring = skills.filter((skill) => skill.permissions.length > 0);
        if (declaring.length === 0) return html`<${Empty} text=${t("perms.empty")} />`;
        return declaring.map(
          (skill) => html`<${SkillPermissions}
            key=${skill.skillId}
            skill=${skill}
            grants=${grants}
            agentId=${agentId}
            agents=${agents}
            target=${target}
            onGrant=${replace}
          />`,
        );
      }}
    <//>
  </section>`;
}
