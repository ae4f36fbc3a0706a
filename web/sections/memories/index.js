// Memories (记忆): one agent's memories, active or forgotten; add one; forget one (after a confirm step
// in the page, keyboard-operable, instead of window.confirm, which screen readers and tests handle badly).
// A forgotten memory is never recalled or injected again; it stays listed under "forgotten".
import "./messages.js";
import { useState } from "preact/hooks";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { AgentSelect, useNotice } from "../../lib/ui.js";
import { AddMemory } from "./add.js";
import { MemoryList } from "./list.js";

export default function Memories({ ctx, route }) {
  const agents = ctx.agents;
  const wanted = route.params.get("agent");
  const initial = agents.some((a) => a.agentId === wanted) ? wanted : agents[0] && agents[0].agentId;
  const [agentId, setAgentId] = useState(initial);
  const [status, setStatus] = useState("active");
  const [message, setMessage] = useNotice();
  // Bumped after an add, so the active list reloads with the new memory in the server's order.
  const [generation, setGeneration] = useState(0);
  const zone = ctx.profile.timezone;

  if (agents.length === 0) {
    return html`<section aria-labelledby="memories-title">
      <h1 id="memories-title">${t("memories.title")}</h1>
      <p class="state empty">${t("memories.noAgents")} <a href="#/agents">${t("memories.createAgent")}</a></p>
    </section>`;
  }
  const current = agents.some((a) => a.agentId === agentId) ? agentId : agents[0].agentId;
  const choose = (value) => {
    setAgentId(value);
    setMessage("");
  };
  return html`<section aria-labelledby="memories-title">
    <h1 id="memories-title">${t("memories.title")}</h1>
    <p class="hint">${t("memories.intro")}</p>
    <div class="row toolbar">
      <div>
        <${AgentSelect} id="memories-agent" agents=${agents} value=${current} onChange=${choose} label=${t("memories.agent")} />
      </div>
      <fieldset class="segmented">
        <legend>${t("memories.filter")}</legend>
        ${["active", "forgotten"].map(
          (value) => html`<label class="check">
            <input type="radio" name="memory-status" value=${value} checked=${status === value}
              onChange=${() => (setStatus(value), setMessage(""))} />
            ${t(`memories.status.${value}`)}
          </label>`,
        )}
      </fieldset>
    </div>
    <p class="hint" role="status" aria-live="polite" data-testid="memories-status">${message}</p>
    <h2>${t(`memories.status.${status}`)}</h2>
    <${MemoryList}
      key=${`${current}/${status}/${generation}`}
      agentId=${current}
      status=${status}
      zone=${zone}
      onForgotten=${(memory) => setMessage(t("memories.forgotten", { title: memory.title }))}
    />
    <${AddMemory}
      key=${current}
      agentId=${current}
      onAdded=${(memory) => {
        setMessage(t("memories.added", { title: memory.title }));
        if (status === "active") setGeneration((n) => n + 1);
      }}
    />
  </section>`;
}
