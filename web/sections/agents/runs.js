// The run behind each reply sent from this page (kind, skill, outcome), kept for the tab's session.
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";

const KINDS = ["plain", "tool", "prompt", "workflow"];
const OUTCOMES = ["succeeded", "denied", "degraded", "failed"];
export const ORIGINS = ["chat", "background", "automation"];

// The run of each reply sent from this page, by the reply's message id: the history from the server has no
// runs. Kept for the browser tab's session (sessionStorage, like the token), so a reload keeps the labels;
// only the newest RUNS_KEPT are kept.
const RUNS_KEY = "skillcore.chatRuns";
const RUNS_KEPT = 500;
export const RUNS = loadRuns();

function loadRuns() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(RUNS_KEY) || "[]");
    return new Map(Array.isArray(stored) ? stored : []);
  } catch {
    return new Map();
  }
}

export function rememberRun(messageId, run) {
  RUNS.set(messageId, run);
  while (RUNS.size > RUNS_KEPT) RUNS.delete(RUNS.keys().next().value);
  try {
    sessionStorage.setItem(RUNS_KEY, JSON.stringify([...RUNS]));
  } catch {
    // Storage may be full or refused: the labels still show until the page is left.
  }
}

// A known code in words, anything else as it is (a new kind must never show a blank).
export function label(prefix, code, known) {
  return known.includes(code) ? t(`${prefix}.${code}`) : code;
}

export function RunLine({ run }) {
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
