// Agents and chat (Agent 与聊天): the user's agents, a form to create one, and a chat pane on the picked
// agent's default conversation. The history shows who wrote each message and where it came from (a chat turn,
// a background job's proactive message, an automation run); a reply sent from this page also shows the run
// that produced it (plain reply, tool skill, prompt skill, workflow, with the skill id and the outcome), which
// is what the turn's answer carries: the history itself holds messages only, so a reply written elsewhere
// (another tab, an API client) shows none.
//
// The picked agent lives in the address (#/agents?agent=ID), so it survives a reload and the back button.
import "./messages.js";
import { useState } from "preact/hooks";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, formatTime, useNotice } from "../../lib/ui.js";
import { ChatPane } from "./chat.js";
import { CreateAgent } from "./create.js";

function AgentList({ agents, current, zone }) {
  if (agents.length === 0) return html`<${Empty} text=${t("agents.empty")} />`;
  return html`<ul class="plain agent-list" aria-label=${t("agents.listTitle")}>
    ${agents.map(
      (agent) => html`<li key=${agent.agentId} data-agent=${agent.agentId}>
        <a href=${`#/agents?agent=${encodeURIComponent(agent.agentId)}`} class="agent-pick"
          aria-current=${agent.agentId === current ? "true" : undefined}>
          <span class="agent-name">${agent.name}</span>
          <span class="meta">${agent.lastReplyAt ? t("agents.lastReply", { time: formatTime(agent.lastReplyAt, zone) }) : t("agents.noReply")}</span>
        </a>
      </li>`,
    )}
  </ul>`;
}

export default function Agents({ ctx, route }) {
  // Agents created here that the shell's list may not hold yet (its re-read failed): never lose one.
  const [extra, setExtra] = useState([]);
  const [lastReply, setLastReply] = useState({});
  const [notice, setNotice] = useNotice();
  const zone = ctx.profile.timezone;
  const listed = new Set(ctx.agents.map((a) => a.agentId));
  const agents = [...ctx.agents, ...extra.filter((a) => !listed.has(a.agentId))].map((a) =>
    lastReply[a.agentId] ? { ...a, lastReplyAt: lastReply[a.agentId] } : a,
  );
  const wanted = route.params.get("agent");
  const current = agents.find((a) => a.agentId === wanted) || agents[0] || null;

  const created = async (agent) => {
    setExtra((old) => [...old, agent]);
    setNotice(t("agents.created", { name: agent.name }));
    ctx.navigate(`#/agents?agent=${encodeURIComponent(agent.agentId)}`);
    try {
      await ctx.reloadAgents(); // the shell's list (every section's agent picker) holds the new agent too
    } catch (error) {
      setNotice(t("agents.listStale", { message: error.message }));
    }
  };

  return html`<section aria-labelledby="agents-title">
    <h1 id="agents-title">${t("agents.title")}</h1>
    <p class="hint">${t("agents.intro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="agents-status">${notice}</p>
    <div class="agents-layout">
      <div class="agents-side">
        <div class="card">
          <h2>${t("agents.listTitle")}</h2>
          <${AgentList} agents=${agents} current=${current && current.agentId} zone=${zone} />
        </div>
        <${CreateAgent} onCreated=${created} />
      </div>
      <div class="agents-main">
        ${current
          ? html`<${ChatPane} key=${current.agentId} agent=${current} zone=${zone}
              onReplied=${(agentId, at) => setLastReply((old) => ({ ...old, [agentId]: at }))} />`
          : html`<p class="state empty">${t("agents.pickOne")}</p>`}
      </div>
    </div>
  </section>`;
}
