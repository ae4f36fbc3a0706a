// The chat pane: the default conversation's history (paged, polled) and the message box.
import { useEffect, useRef, useState } from "preact/hooks";
import { get, post } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { markdown } from "../../lib/markdown.js";
import { Empty, ErrorBox, formatTime, Loading, newClientId, useAction } from "../../lib/ui.js";
import { KNOWN_CARDS, MessageCard } from "./cards.js";
import { label, ORIGINS, rememberRun, RunLine, RUNS } from "./runs.js";

const PAGE = 100;
const POLL_MS = 4000;

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

// The person's own text as typed; the agent's as Markdown (lib/markdown.js: never HTML), and a card the server
// sent beside it (cards.js) in place of the text when the text is only the card written out.
function MessageBody({ message, zone, onDecided }) {
  if (message.role === "user") return html`<p class="text" data-testid="message-text" data-user-content="">${message.text}</p>`;
  const card = message.card && KNOWN_CARDS.includes(message.card.kind) ? message.card : null;
  return html`${(!card || !card.replacesText) &&
    html`<div class="text markdown" data-testid="message-text">${markdown(message.text)}</div>`}
    ${card && html`<${MessageCard} card=${card} messageId=${message.messageId} zone=${zone} onDecided=${onDecided} />`}`;
}

function MessageItem({ message, agentName, zone, onDecided }) {
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
    <${MessageBody} message=${message} zone=${zone} onDecided=${onDecided} />
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

export function ChatPane({ agent, zone, onReplied }) {
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
              (message) => html`<${MessageItem} key=${message.messageId} message=${message} agentName=${agent.name} zone=${zone}
                onDecided=${history.refresh} />`,
            )}
          </ol>`}
    </div>`}
    ${history.refreshError &&
    html`<div class="hint error" role="status">${t("chat.refreshFailed")} ${history.refreshError.message}</div>`}
    <p class="hint">${t("chat.polling", { s: POLL_MS / 1000 })}</p>
    <form class="chat-send" onSubmit=${(e) => (e.preventDefault(), send())} aria-label=${t("chat.message")}>
      <label for="chat-input">${t("chat.message")}</label>
      <textarea id="chat-input" ref=${input} value=${text} maxlength=${limits().chatMessage} rows="3"
        readonly=${sending} aria-busy=${sending ? "true" : undefined} aria-describedby="chat-keys chat-count"
        onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
      <div class="row">
        <p id="chat-keys" class="hint grow">${t("chat.keys")}</p>
        <p id="chat-count" class="hint">${t("agents.counter", { n: text.length, max: limits().chatMessage })}</p>
        <button type="submit" disabled=${sending || !text.trim()}>${sending ? t("chat.sending") : t("chat.send")}</button>
      </div>
      <p class="hint" role="status" aria-live="polite" data-testid="chat-status">${status}</p>
      <${ErrorBox} error=${sendError} />
    </form>
  </section>`;
}
