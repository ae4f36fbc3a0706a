// Shared pieces every section uses, so each state a person meets looks and reads the same everywhere:
// loading, empty, error (the envelope's message and code, never a stack), switches, times in a zone.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { lang, onLangChange, register, t } from "./i18n.js";

register({
  zh: {
    "state.loading": "加载中…",
    "state.retry": "重试",
    "state.empty": "暂无内容",
    "error.code": "错误代码",
    "error.network": "无法连接服务器，请检查网络后重试。",
    "error.generic": "请求失败（{status}）。",
    "error.sessionEnded": "登录已过期，请重新登录。",
    "error.signedOut": "尚未登录。",
    "error.signInAgain": "这一步需要最近 15 分钟内的登录，请重新登录后再试。",
    "switch.on": "已开启",
    "switch.off": "已关闭",
  },
  en: {
    "state.loading": "Loading…",
    "state.retry": "Retry",
    "state.empty": "Nothing here yet",
    "error.code": "Error code",
    "error.network": "Cannot reach the server. Check the connection and retry.",
    "error.generic": "The request failed ({status}).",
    "error.sessionEnded": "Your session has ended. Please sign in again.",
    "error.signedOut": "Not signed in.",
    "error.signInAgain": "This needs a sign-in within the last 15 minutes. Please sign in again and retry.",
    "switch.on": "On",
    "switch.off": "Off",
  },
});

// Moves the focus to `target` (an element id, or a ref) once the render that the caller's state change scheduled
// has run. Preact renders in a microtask queued by that change, so a microtask queued after it runs after the
// render, within the same event: the focus is where it belongs before the person's next key. (A timer can fire
// after that key on a busy machine and take the typing with it into the field it focuses.) A target not there
// yet, or disabled while its action is busy, is tried again at each frame for about a second.
const FOCUS_FRAMES = 60;

export function focusAfterRender(target) {
  const attempt = (left) => {
    const element = typeof target === "string" ? document.getElementById(target) : target && target.current;
    if (element && !element.disabled) element.focus();
    else if (left > 0) requestAnimationFrame(() => attempt(left - 1));
  };
  queueMicrotask(() => queueMicrotask(() => attempt(FOCUS_FRAMES)));
}

// useLoad(fn, deps) -> {status: "loading"|"ready"|"error", data, error, reload, setData}
export function useLoad(load, deps) {
  const [state, setState] = useState({ status: "loading", data: null, error: null });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((old) => ({ ...old, status: old.data === null ? "loading" : old.status, error: null }));
    load().then(
      (data) => mine === generation.current && setState({ status: "ready", data, error: null }),
      (error) => mine === generation.current && setState({ status: "error", data: null, error }),
    );
  }, deps);
  useEffect(run, [run]);
  const setData = (update) =>
    setState((old) => ({ ...old, data: typeof update === "function" ? update(old.data) : update }));
  return { ...state, reload: run, setData };
}

// A notice (a status sentence such as "Saved"): [notice, setNotice] like useState(""), said in the language shown,
// and cleared when the person switches language, so a sentence never stays behind in the other one.
export function useNotice() {
  const [notice, setNotice] = useState("");
  useLayoutEffect(() => onLangChange(() => setNotice("")), []);
  return [notice, setNotice];
}

// Runs an action (a click, a submit) with its own busy and error state.
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (action) => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}

export function Loading() {
  return html`<p class="state loading" role="status" aria-live="polite">${t("state.loading")}</p>`;
}

export function Empty({ text }) {
  return html`<p class="state empty">${text || t("state.empty")}</p>`;
}

export function ErrorBox({ error, onRetry }) {
  if (!error) return null;
  const code = error.code && error.code !== "network" ? error.code : null;
  return html`<div class="state error" role="alert">
    <p>${error.message}</p>
    ${code && html`<p class="code">${t("error.code")}: <code>${code}</code></p>`}
    ${onRetry && html`<button type="button" onClick=${onRetry}>${t("state.retry")}</button>`}
  </div>`;
}

// Loading / error / content for a useLoad() result.
export function Loaded({ state, children }) {
  if (state.status === "loading" && state.data === null) return html`<${Loading} />`;
  if (state.status === "error") return html`<${ErrorBox} error=${state.error} onRetry=${state.reload} />`;
  return children(state.data);
}

// A real switch: a button with role="switch" and aria-checked, labelled, keyboard-operable (Space/Enter).
// Other attributes (data-*, aria-busy) go onto the button as given.
export function Switch({ id, checked, label, describedBy, disabled, onChange, ...rest }) {
  return html`<button
    ...${rest}
    type="button"
    role="switch"
    id=${id}
    class="switch"
    aria-checked=${checked ? "true" : "false"}
    aria-label=${label}
    aria-describedby=${describedBy}
    disabled=${disabled}
    onClick=${() => onChange(!checked)}
  >
    <span class="track" aria-hidden="true"><span class="thumb"></span></span>
    <span class="switch-state">${checked ? t("switch.on") : t("switch.off")}</span>
  </button>`;
}

// "2026-12-02T02:00:00Z" shown in `zone` (the profile's), with the zone named, in the page's language through
// Intl: "2026/12/02 GMT+8 10:00" in Chinese (year first), "2 Dec 2026, 10:00 GMT+8" in English (the month named),
// so a list never reads 04/12 or 12/04 whatever the browser's own date format (which a date field follows).
export function formatTime(iso, zone) {
  if (!iso) return "—";
  const value = new Date(iso);
  if (Number.isNaN(value.getTime())) return iso;
  const zh = lang() === "zh";
  return new Intl.DateTimeFormat(zh ? "zh-CN" : "en-GB", {
    timeZone: zone || undefined,
    year: "numeric",
    month: zh ? "2-digit" : "short",
    day: zh ? "2-digit" : "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }).format(value);
}

// Milliseconds `zone` is ahead of UTC at the instant `ms`.
export function offsetAt(ms, zone) {
  const parts = wallParts(ms, zone);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

function wallParts(ms, zone) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone: zone || undefined, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    }).formatToParts(new Date(ms)).map((p) => [p.type, Number(p.value)]),
  );
  return parts;
}

const pad = (n) => String(n).padStart(2, "0");

// The wall time of the instant `ms` in `zone`, as <input type="datetime-local"> holds it ("2026-12-04T10:00").
export function zonedInputValue(ms, zone) {
  const p = wallParts(ms, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

// "2026-03-29T02:30" (a datetime-local value) read in `zone` (the profile's, never the browser's) ->
// {ms, iso: "2026-03-29T03:30:00+02:00", shifted}. The offset is the one in force at that instant (DST included),
// never today's; a wall time skipped by a DST jump resolves to the later real time, and `shifted` says so.
export function zonedInstant(local, zone) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local || "");
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part || 0));
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (Number.isNaN(wall)) return null;
  let ms = wall - offsetAt(wall, zone);
  ms = wall - offsetAt(ms, zone); // once more: the offset at the instant itself (around a change)
  const offset = offsetAt(ms, zone) / 60_000;
  const p = wallParts(ms, zone);
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  const iso = `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const shifted = p.hour !== hour || p.minute !== minute || p.day !== day;
  return { ms, iso, shifted };
}

export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

// A client message id the API accepts ([A-Za-z0-9_-]{1,64}).
export function newClientId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// An agent picker used by several sections; `agents` comes from the shell.
export function AgentSelect({ id, agents, value, onChange, label }) {
  return html`<label for=${id}>${label}</label>
    <select id=${id} value=${value || ""} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${agents.map((agent) => html`<option value=${agent.agentId}>${agent.name}</option>`)}
    </select>`;
}
