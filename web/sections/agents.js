// Agents and chat (Agent 与聊天): the user's agents, a form to create one, and a chat pane on the picked
// agent's default conversation. The history shows who wrote each message and where it came from (a chat turn,
// a background job's proactive message, an automation run); a reply sent from this page also shows the run
// that produced it (plain reply, tool skill, prompt skill, workflow, with the skill id and the outcome), which
// is what the turn's answer carries: the history itself holds messages only, so a reply written elsewhere
// (another tab, an API client) shows none.
//
// The picked agent lives in the address (#/agents?agent=ID), so it survives a reload and the back button.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, post } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { Empty, ErrorBox, formatTime, Loading, newClientId, useAction } from "../lib/ui.js";

const NAME_MAX = 40;
const PERSONA_MAX = 2000;
const TEXT_MAX = 4000;
const PAGE = 100;
const POLL_MS = 4000;
const KINDS = ["plain", "tool", "prompt", "workflow"];
const OUTCOMES = ["succeeded", "denied", "degraded", "failed"];
const ORIGINS = ["chat", "background", "automation"];

// The run of each reply sent from this page, by the reply's message id: the history from the server has no
// runs. Kept for the browser tab's session (sessionStorage, like the token), so a reload keeps the labels;
// only the newest RUNS_KEPT are kept.
const RUNS_KEY = "skillcore.chatRuns";
const RUNS_KEPT = 500;
const RUNS = loadRuns();

function loadRuns() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(RUNS_KEY) || "[]");
    return new Map(Array.isArray(stored) ? stored : []);
  } catch {
    return new Map();
  }
}

function rememberRun(messageId, run) {
  RUNS.set(messageId, run);
  while (RUNS.size > RUNS_KEPT) RUNS.delete(RUNS.keys().next().value);
  try {
    sessionStorage.setItem(RUNS_KEY, JSON.stringify([...RUNS]));
  } catch {
    // Storage may be full or refused: the labels still show until the page is left.
  }
}

register({
  zh: {
    "agents.title": "Agent 与聊天",
    "agents.intro": "每个 Agent 有一个默认单聊会话。选择一个 Agent 和它聊天；技能如何处理每条回复，会标在回复下面。",
    "agents.listTitle": "我的 Agent",
    "agents.empty": "还没有 Agent。在下面创建第一个。",
    "agents.lastReply": "最近回复：{time}",
    "agents.noReply": "还没有回复",
    "agents.createTitle": "创建 Agent",
    "agents.name": "名称",
    "agents.persona": "人设（可选）",
    "agents.personaHint": "用几句话描述它的性格和说话方式。",
    "agents.counter": "{n}/{max} 字",
    "agents.create": "创建",
    "agents.creating": "创建中…",
    "agents.created": "已创建 Agent“{name}”。",
    "agents.listStale": "Agent 已创建，但列表没能刷新：{message}",
    "agents.fieldRequired": "请填写这一项。",
    "agents.fieldBlank": "不能只有空格。",
    "agents.fieldTooLong": "最多 {max} 字。",
    "agents.pickOne": "创建一个 Agent 后，就可以在这里和它聊天。",
    "chat.title": "与 {name} 聊天",
    "chat.log": "与 {name} 的聊天记录",
    "chat.empty": "还没有消息。发第一条吧。",
    "chat.you": "你",
    "chat.origin.chat": "聊天",
    "chat.origin.background": "后台消息",
    "chat.origin.automation": "自动化任务",
    "chat.originHint.background": "由后台任务主动发送（例如目标复盘提醒）",
    "chat.originHint.automation": "由自动化任务生成",
    "chat.run": "处理方式",
    "chat.kind.plain": "普通回复",
    "chat.kind.tool": "工具技能",
    "chat.kind.prompt": "提示词技能",
    "chat.kind.workflow": "工作流",
    "chat.outcome.succeeded": "成功",
    "chat.outcome.denied": "未授权",
    "chat.outcome.degraded": "已降级",
    "chat.outcome.failed": "失败",
    "chat.memories": "使用了 {n} 条记忆",
    "chat.grantLink": "前往执行权限开启",
    "chat.message": "消息",
    "chat.keys": "Enter 发送，Shift+Enter 换行。",
    "chat.send": "发送",
    "chat.sending": "发送中…",
    "chat.waiting": "消息已发出，正在等待回复…",
    "chat.failed": "消息没有发出，仍保留在输入框里，可以重试。",
    "chat.refresh": "刷新记录",
    "chat.refreshFailed": "聊天记录没能刷新：",
    "chat.polling": "新消息（包括后台消息）每 {s} 秒自动出现。",
  },
  en: {
    "agents.title": "Agents and chat",
    "agents.intro": "Each agent has one default single chat. Pick an agent to chat with it; how the skills handled each reply is shown under the reply.",
    "agents.listTitle": "My agents",
    "agents.empty": "There is no agent yet. Create the first one below.",
    "agents.lastReply": "Last reply: {time}",
    "agents.noReply": "No reply yet",
    "agents.createTitle": "Create an agent",
    "agents.name": "Name",
    "agents.persona": "Persona (optional)",
    "agents.personaHint": "A few sentences on its character and how it talks.",
    "agents.counter": "{n}/{max} characters",
    "agents.create": "Create",
    "agents.creating": "Creating…",
    "agents.created": "Agent “{name}” is created.",
    "agents.listStale": "The agent is created, but the list could not refresh: {message}",
    "agents.fieldRequired": "Fill this in.",
    "agents.fieldBlank": "It cannot be only spaces.",
    "agents.fieldTooLong": "At most {max} characters.",
    "agents.pickOne": "Once there is an agent, you can chat with it here.",
    "chat.title": "Chat with {name}",
    "chat.log": "Chat history with {name}",
    "chat.empty": "No messages yet. Send the first one.",
    "chat.you": "You",
    "chat.origin.chat": "Chat",
    "chat.origin.background": "Background message",
    "chat.origin.automation": "Automation",
    "chat.originHint.background": "Sent on its own by a background job (such as a goal check-in reminder)",
    "chat.originHint.automation": "Written by an automation job",
    "chat.run": "Handled as",
    "chat.kind.plain": "Plain reply",
    "chat.kind.tool": "Tool skill",
    "chat.kind.prompt": "Prompt skill",
    "chat.kind.workflow": "Workflow",
    "chat.outcome.succeeded": "succeeded",
    "chat.outcome.denied": "not permitted",
    "chat.outcome.degraded": "degraded",
    "chat.outcome.failed": "failed",
    "chat.memories": "{n} memories used",
    "chat.grantLink": "Turn it on under Permissions",
    "chat.message": "Message",
    "chat.keys": "Enter sends, Shift+Enter starts a new line.",
    "chat.send": "Send",
    "chat.sending": "Sending…",
    "chat.waiting": "Sent; waiting for the reply…",
    "chat.failed": "The message was not sent; it is still in the box, ready to retry.",
    "chat.refresh": "Refresh history",
    "chat.refreshFailed": "The history could not refresh:",
    "chat.polling": "New messages (background ones too) appear on their own every {s} seconds.",
  },
});

// A known code in words, anything else as it is (a new kind must never show a blank).
function label(prefix, code, known) {
  return known.includes(code) ? t(`${prefix}.${code}`) : code;
}

// The API's field errors (details.errors: [{path, message, type}]) by field, in the page's language where the
// rule is known (required, blank, too long), else the server's own words.
function fieldErrors(error, limits) {
  const byField = {};
  if (!(error instanceof ApiError)) return byField;
  for (const item of error.details.errors || []) {
    const field = String(item.path || "").split(".").pop();
    if (!field || byField[field]) continue;
    if (item.type === "string_too_short" || item.type === "missing") byField[field] = t("agents.fieldRequired");
    else if (item.type === "string_too_long" && limits[field]) byField[field] = t("agents.fieldTooLong", { max: limits[field] });
    else if (/blank/i.test(item.message || "")) byField[field] = t("agents.fieldBlank");
    else byField[field] = item.message;
  }
  return byField;
}

function CreateAgent({ onCreated }) {
  const [name, setName] = useState("");
  const [persona, setPersona] = useState("");
  const action = useAction();
  const nameInput = useRef(null);
  const personaInput = useRef(null);
  const errors = fieldErrors(action.error, { name: NAME_MAX, persona: PERSONA_MAX });
  const hasFieldErrors = Object.keys(errors).length > 0;

  useLayoutEffect(() => {
    // A refused form puts the focus on the first field the server named.
    if (errors.name) nameInput.current && nameInput.current.focus();
    else if (errors.persona) personaInput.current && personaInput.current.focus();
  }, [action.error]);

  const submit = (event) => {
    event.preventDefault();
    if (action.busy) return;
    action.run(async () => {
      const body = { name };
      if (persona) body.persona = persona;
      const agent = await post("/agents", body);
      setName("");
      setPersona("");
      await onCreated(agent);
    });
  };
  const described = (field, hint) => [hint, errors[field] && `agent-${field}-error`].filter(Boolean).join(" ");
  return html`<form class="card" aria-labelledby="agent-create-title" onSubmit=${submit} novalidate>
    <h2 id="agent-create-title">${t("agents.createTitle")}</h2>
    <label for="agent-name">${t("agents.name")}</label>
    <input id="agent-name" name="name" maxlength=${NAME_MAX} value=${name} ref=${nameInput} autocomplete="off"
      aria-invalid=${errors.name ? "true" : undefined} aria-describedby=${described("name", "agent-name-count")}
      onInput=${(e) => setName(e.currentTarget.value)} />
    <p id="agent-name-count" class="hint">${t("agents.counter", { n: name.length, max: NAME_MAX })}</p>
    ${errors.name && html`<p id="agent-name-error" class="field-error">${errors.name}</p>`}
    <label for="agent-persona">${t("agents.persona")}</label>
    <textarea id="agent-persona" name="persona" maxlength=${PERSONA_MAX} value=${persona} ref=${personaInput}
      aria-invalid=${errors.persona ? "true" : undefined}
      aria-describedby=${described("persona", "agent-persona-hint agent-persona-count")}
      onInput=${(e) => setPersona(e.currentTarget.value)}></textarea>
    <p id="agent-persona-hint" class="hint">${t("agents.personaHint")}</p>
    <p id="agent-persona-count" class="hint">${t("agents.counter", { n: persona.length, max: PERSONA_MAX })}</p>
    ${errors.persona && html`<p id="agent-persona-error" class="field-error">${errors.persona}</p>`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("agents.creating") : t("agents.create")}</button>
    </div>
    ${!hasFieldErrors && html`<${ErrorBox} error=${action.error} />`}
  </form>`;
}

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

function messagesPath(conversationId, cursor) {
  const base = `/conversations/${encodeURIComponent(conversationId)}/messages?limit=${PAGE}`;
  return cursor ? `${base}&cursor=${encodeURIComponent(cursor)}` : base;
}

// Every visible message from `cursor` on (oldest first), and where the last non-empty page started: the
// history is re-read from there, so a poll costs one request however long the conversation is.
async function readFrom(conversationId, cursor) {
  const items = [];
  let tailCursor = cursor;
  let tailOffset = 0;
  let next = cursor;
  do {
    const page = await get(messagesPath(conversationId, next));
    if (page.items.length > 0) {
      tailCursor = next;
      tailOffset = items.length;
    }
    items.push(...page.items);
    next = page.nextCursor;
  } while (next);
  return { items, tailCursor, tailOffset };
}

function RunLine({ run }) {
  return html`<p class="run" data-testid="run" data-kind=${run.kind} data-outcome=${run.outcome}>
    <span class="visually-hidden">${t("chat.run")}: </span>
    <span class="tag" data-testid="run-kind">${label("chat.kind", run.kind, KINDS)}</span>
    ${run.skillId && html` <code data-testid="run-skill">${run.skillId}</code>`}
    ${" "}<span class=${`status status-${run.outcome}`} data-testid="run-outcome">${label("chat.outcome", run.outcome, OUTCOMES)}</span>
    ${run.memoriesUsed ? html` · <span>${t("chat.memories", { n: run.memoriesUsed })}</span>` : ""}
    ${run.outcome === "denied" &&
    run.skillId &&
    html` · <a href=${`#/permissions?skill=${encodeURIComponent(run.skillId)}`}>${t("chat.grantLink")}</a>`}
  </p>`;
}

function MessageItem({ message, agentName, zone }) {
  const mine = message.role === "user";
  const run = RUNS.get(message.messageId);
  const proactive = message.origin !== "chat";
  return html`<li class=${`${mine ? "user" : "assistant"} origin-${message.origin}`} data-message=${message.messageId}
    data-role=${message.role} data-origin=${message.origin}>
    <p class="msg-head">
      <strong>${mine ? t("chat.you") : agentName}</strong>
      ${proactive &&
      html` <span class="tag origin" data-testid="origin" title=${t(`chat.originHint.${message.origin}`)}>${label("chat.origin", message.origin, ORIGINS)}</span>`}
      ${" "}<time class="meta" datetime=${message.createdAt}>${formatTime(message.createdAt, zone)}</time>
    </p>
    ${proactive && ORIGINS.includes(message.origin) && html`<p class="visually-hidden">${t(`chat.originHint.${message.origin}`)}</p>`}
    <p class="text" data-testid="message-text">${message.text}</p>
    ${run && html`<${RunLine} run=${run} />`}
  </li>`;
}

function useHistory(conversationId, paused) {
  const [state, setState] = useState({ status: "loading", items: [], error: null, refreshError: null });
  const tail = useRef({ cursor: null, offset: 0 });
  const loads = useRef(0); // the latest full read wins
  const generation = useRef(0); // bumped by a full read and by a send: a re-read started before either is dropped
  const reading = useRef(false);

  const load = async () => {
    const mine = ++loads.current;
    generation.current += 1;
    setState({ status: "loading", items: [], error: null, refreshError: null });
    try {
      const read = await readFrom(conversationId, null);
      if (mine !== loads.current) return;
      tail.current = { cursor: read.tailCursor, offset: read.tailOffset };
      // A turn sent while the history was loading is kept, whether or not the read saw it.
      setState((old) => {
        const known = new Set(read.items.map((m) => m.messageId));
        const items = [...read.items, ...old.items.filter((m) => !known.has(m.messageId))];
        return { status: "ready", items, error: null, refreshError: null };
      });
    } catch (error) {
      if (mine === loads.current) setState((old) => ({ ...old, status: "error", error, refreshError: null }));
    }
  };

  const refresh = async () => {
    if (reading.current) return;
    reading.current = true;
    const mine = generation.current;
    const { cursor, offset } = tail.current;
    try {
      const read = await readFrom(conversationId, cursor);
      if (mine !== generation.current) return;
      tail.current = { cursor: read.tailCursor, offset: offset + read.tailOffset };
      setState((old) => {
        const items = [...old.items.slice(0, offset), ...read.items];
        const same = items.length === old.items.length && items.every((m, i) => m.messageId === old.items[i].messageId);
        return same && !old.refreshError ? old : { ...old, items, refreshError: null };
      });
    } catch (error) {
      if (mine === generation.current) setState((old) => ({ ...old, refreshError: error }));
    } finally {
      reading.current = false;
    }
  };

  // A turn's two messages join the history at once; the next re-read confirms them in the server's order.
  const append = (...messages) => {
    generation.current += 1;
    setState((old) => {
      const known = new Set(old.items.map((m) => m.messageId));
      return { ...old, items: [...old.items, ...messages.filter((m) => !known.has(m.messageId))] };
    });
  };

  useEffect(() => {
    load();
  }, [conversationId]);

  // Background messages arrive on their own (a reminder's scan): re-read the tail a few seconds after each
  // answer, never two at once, not while a message is being sent, and not in a hidden tab.
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  useEffect(() => {
    if (state.status !== "ready") return undefined;
    let timer = null;
    let live = true;
    const tick = async () => {
      if (!pausedRef.current && document.visibilityState !== "hidden") await refresh();
      if (live) timer = setTimeout(tick, POLL_MS);
    };
    timer = setTimeout(tick, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [conversationId, state.status]);

  return { ...state, reload: load, refresh, append };
}

function ChatPane({ agent, zone, onReplied }) {
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [sendError, setSendError] = useState(null);
  const [status, setStatus] = useState("");
  const pending = useRef(null); // {id, text}: a failed send retried with the same text keeps its id
  const inFlight = useRef(false);
  const input = useRef(null);
  const log = useRef(null);
  const history = useHistory(agent.defaultConversationId, sending);
  const refreshAction = useAction();

  useEffect(() => {
    // The newest message in view, as in any chat.
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [history.items.length, history.status]);

  const send = async () => {
    // The ref, not the state: two Enter presses before the next render must not send twice.
    if (inFlight.current || !text.trim()) return;
    inFlight.current = true;
    const sent = text;
    if (!pending.current || pending.current.text !== sent) pending.current = { id: newClientId(), text: sent };
    setSending(true);
    setSendError(null);
    setStatus(t("chat.waiting"));
    try {
      const turn = await post(`/conversations/${encodeURIComponent(agent.defaultConversationId)}/messages`, {
        clientMessageId: pending.current.id,
        text: sent,
      });
      rememberRun(turn.reply.messageId, turn.run);
      pending.current = null;
      history.append(turn.userMessage, turn.reply);
      // Only what was sent leaves the box: anything typed meanwhile stays.
      setText((now) => (now === sent ? "" : now));
      setStatus("");
      onReplied(agent.agentId, turn.reply.createdAt);
    } catch (error) {
      setSendError(error);
      setStatus(t("chat.failed"));
    } finally {
      inFlight.current = false;
      setSending(false);
      input.current && input.current.focus();
    }
  };

  const onKeyDown = (event) => {
    // Enter sends, Shift+Enter is a new line; Enter that ends an IME composition (Chinese input) only confirms it.
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    event.preventDefault();
    send();
  };

  const names = { name: agent.name };
  return html`<section class="card chat" aria-labelledby="chat-title" data-agent=${agent.agentId}>
    <div class="row">
      <h2 id="chat-title" class="grow">${t("chat.title", names)}</h2>
      <button type="button" class="quiet" disabled=${refreshAction.busy}
        onClick=${() => refreshAction.run(history.reload)}>${t("chat.refresh")}</button>
    </div>
    ${history.status === "loading" && html`<${Loading} />`}
    ${history.status === "error" && html`<${ErrorBox} error=${history.error} onRetry=${history.reload} />`}
    ${history.status === "ready" &&
    html`<div class="chat-scroll" ref=${log} role="log" aria-label=${t("chat.log", names)} tabindex="0" data-testid="chat-log">
      ${history.items.length === 0
        ? html`<${Empty} text=${t("chat.empty")} />`
        : html`<ol class="chat-log">
            ${history.items.map(
              (message) => html`<${MessageItem} key=${message.messageId} message=${message} agentName=${agent.name} zone=${zone} />`,
            )}
          </ol>`}
    </div>`}
    ${history.refreshError &&
    html`<div class="hint error" role="status">${t("chat.refreshFailed")} ${history.refreshError.message}</div>`}
    <p class="hint">${t("chat.polling", { s: POLL_MS / 1000 })}</p>
    <form class="chat-send" onSubmit=${(e) => (e.preventDefault(), send())} aria-label=${t("chat.message")}>
      <label for="chat-input">${t("chat.message")}</label>
      <textarea id="chat-input" ref=${input} value=${text} maxlength=${TEXT_MAX} rows="3"
        readonly=${sending} aria-busy=${sending ? "true" : undefined} aria-describedby="chat-keys chat-count"
        onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
      <div class="row">
        <p id="chat-keys" class="hint grow">${t("chat.keys")}</p>
        <p id="chat-count" class="hint">${t("agents.counter", { n: text.length, max: TEXT_MAX })}</p>
        <button type="submit" disabled=${sending || !text.trim()}>${sending ? t("chat.sending") : t("chat.send")}</button>
      </div>
      <p class="hint" role="status" aria-live="polite" data-testid="chat-status">${status}</p>
      <${ErrorBox} error=${sendError} />
    </form>
  </section>`;
}

export default function Agents({ ctx, route }) {
  // Agents created here that the shell's list may not hold yet (its re-read failed): never lose one.
  const [extra, setExtra] = useState([]);
  const [lastReply, setLastReply] = useState({});
  const [notice, setNotice] = useState("");
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
