// Permissions (执行权限): one switch per permission a skill declares, apart from the skill's enable switch,
// with its risk level, approval mode and scope. The scope is the whole user (every agent) or one agent,
// chosen above the list; each switch grants or revokes in that scope and shows what the server answered.
// `#/permissions?skill=<id>&permission=<code>[&agent=<agentId>]` scrolls to that switch, focuses it and
// highlights it (the reminders section links here when its permission is missing). A grant may be narrowed
// (narrowing.js): each row shows what its grant is limited to, and can grant with a narrowing.
import "./messages.js";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, Loaded, useLoad } from "../../lib/ui.js";
import { RiskLegend } from "./legend.js";
import { SkillPermissions, USER_SCOPE } from "./rows.js";

async function loadAll() {
  const [skills, grants] = await Promise.all([listAll("/skills"), listAll("/skills/permissions")]);
  // The endpoints' names, only when a grant is narrowed to one (no request otherwise).
  const named = grants.some((g) => (g.scope.resources || []).some((r) => r.kind === "hosted_endpoint"));
  const endpoints = named ? await listAll("/hosted-endpoints").catch(() => null) : null;
  return { skills, grants, endpoints };
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

  const replace = (grant, endpoints) =>
    state.setData((data) => {
      const others = data.grants.filter((g) => g.grantId !== grant.grantId &&
        !(g.skillId === grant.skillId && g.permissionCode === grant.permissionCode &&
          g.scope.type === grant.scope.type && (g.scope.agentId || "") === (grant.scope.agentId || "")));
      return { ...data, grants: [...others, grant], endpoints: endpoints || data.endpoints };
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
      ${({ skills, grants, endpoints }) => {
        const declaring = skills.filter((skill) => skill.permissions.length > 0);
        if (declaring.length === 0) return html`<${Empty} text=${t("perms.empty")} />`;
        return declaring.map(
          (skill) => html`<${SkillPermissions}
            key=${skill.skillId}
            skill=${skill}
            grants=${grants}
            endpoints=${endpoints}
            agentId=${agentId}
            agents=${agents}
            zone=${ctx.profile.timezone}
            target=${target}
            onGrant=${replace}
          />`,
        );
      }}
    <//>
  </section>`;
}
