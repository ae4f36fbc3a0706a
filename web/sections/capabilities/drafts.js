// Creating a capability by conversation: a description, the drafter's gaps answered, the proposal confirmed.
// Open drafts are listed and resumed (GET /rpc/user-capability-drafts?status=open); answers are multi-line; a
// step the drafter asks about shows its own description and is answered by a capability, a tool or dropping it.
import "./draft_messages.js";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { listAll, post } from "../../lib/api.js";
import { FieldError } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { Empty, ErrorBox, focusAfterRender, formatTime, Loaded, useAction, useLoad } from "../../lib/ui.js";
import { DEFAULT_SCHEMA, parseSchema } from "./bindings.js";
import { capabilityErrors, invalid, schemaMessage } from "./errors.js";

const emptyBinding = () => ({
  name: "",
  hostProfile: "",
  mcpServerId: "",
  mcpToolName: "",
  requiresUserConfirmation: true,
  schemaText: DEFAULT_SCHEMA,
});

// The binding a missing_binding gap asks for, as a small form inside the answer (same fields as a binding).
function GapBinding({ gap, index, value, onChange, errors, schemaErrors }) {
  const id = `gap-${index}-binding`;
  const key = `answers.${index}.binding`;
  const set = (field) => (e) => onChange({ ...value, [field]: e.currentTarget.value });
  const input = (field, label) => html`<div>
    <label for=${`${id}-${field}`}>${label}</label>
    <input id=${`${id}-${field}`} value=${value[field]} autocomplete="off" spellcheck="false"
      ...${invalid(errors, `${key}.${field}`, `${id}-${field}`)} onInput=${set(field)} />
    <${FieldError} id=${`${id}-${field}-error`} messages=${errors[`${key}.${field}`]} />
  </div>`;
  const schemaInvalid = schemaErrors.length > 0 || Boolean(value.jsonError);
  return html`<fieldset class="tools" aria-describedby=${`gap-${index}-question`}>
    <legend>${t("caps.gapBinding")}</legend>
    <div class="row">
      ${input("name", t("caps.bindingName"))} ${input("hostProfile", t("caps.hostProfile"))}
      ${input("mcpServerId", t("caps.mcpServerId"))} ${input("mcpToolName", t("caps.mcpToolName"))}
    </div>
    <label class="check">
      <input type="checkbox" checked=${value.requiresUserConfirmation}
        onChange=${(e) => onChange({ ...value, requiresUserConfirmation: e.currentTarget.checked })} />
      ${t("caps.confirmEachRun")}
    </label>
    <label for=${`${id}-schema`}>${t("caps.inputSchema")}</label>
    <textarea id=${`${id}-schema`} class="code" rows="6" spellcheck="false" value=${value.schemaText}
      aria-invalid=${schemaInvalid ? "true" : undefined} aria-describedby=${schemaInvalid ? `${id}-schema-errors` : undefined}
      onInput=${(e) => onChange({ ...value, schemaText: e.currentTarget.value, jsonError: "" })}></textarea>
    ${schemaInvalid &&
    html`<div id=${`${id}-schema-errors`} class="field-error" data-testid="schema-errors">
      ${value.jsonError && html`<p>${value.jsonError}</p>`}
      <ul>
        ${schemaErrors.map(
          (e) => html`<li data-testid="schema-error" data-path=${e.path}>
            <code>${e.path === "" ? t("caps.root") : e.path}</code> — ${schemaMessage(e.keyword)}
          </li>`,
        )}
      </ul>
    </div>`}
  </fieldset>`;
}

function ProposalView({ proposal, skills }) {
  if (!proposal) return html`<${Empty} text=${t("caps.noProposal")} />`;
  const skillName = (id) => (skills.find((s) => s.skillId === id) || { name: id }).name;
  return html`<section class="card" aria-labelledby="draft-proposal-title" data-testid="proposal">
    <h3 id="draft-proposal-title">${t("caps.proposal")}</h3>
    <dl class="facts">
      <dt>${t("caps.proposalName")}</dt><dd><code>${proposal.name}</code></dd>
      <dt>${t("caps.displayName")}</dt><dd>${proposal.displayName}</dd>
      <dt>${t("caps.whenToUse")}</dt><dd>${proposal.whenToUse.join(" · ")}</dd>
      <dt>${t("caps.objective")}</dt><dd class="prewrap">${proposal.workflow.objective}</dd>
      <dt>${t("caps.stepsTitle")}</dt>
      <dd>
        <ol data-testid="proposal-steps">
          ${proposal.workflow.steps.map(
            (step) => html`<li>
              ${step.kind === "localTool"
                ? html`<span class="tag">${t("caps.kind.localTool")}</span> <code>${step.toolName}</code> (${step.hostProfile})`
                : html`<span class="tag">${t("caps.kind.platformCapability")}</span> ${skillName(step.capabilityId)} <code>${step.capabilityId}</code>`}
              <span class="prewrap"> — ${step.instruction}</span>
            </li>`,
          )}
        </ol>
      </dd>
      <dt>${t("caps.completion")}</dt><dd class="prewrap">${proposal.workflow.completionCriteria}</dd>
      ${proposal.toolBindings.length > 0 &&
      html`<dt>${t("caps.proposalBindings")}</dt>
        <dd>
          ${proposal.toolBindings.map(
            (b) => html`<div><code>${b.name}</code> · ${b.hostProfile} · <code>${b.mcpServerId}/${b.mcpToolName}</code></div>`,
          )}
        </dd>`}
    </dl>
  </section>`;
}

// A gap about one step (`/workflow/steps/<i>...`): its step number, else null.
function stepOf(gap) {
  const found = /^\/workflow\/steps\/(\d+)(?:\/|$)/.exec(gap.path);
  return found ? Number(found[1]) + 1 : null;
}

// How a step gap is answered: a written answer, one of the built-in capabilities (its id), a tool on the agent
// host (a binding), or dropping the step.
function StepChoice({ gap, index, skills, value, onChange }) {
  const id = `gap-${index}-how`;
  const choice = value.how || (gap.kind === "missing_binding" ? "tool" : "text");
  return html`<div>
    <label for=${id}>${t("caps.stepHow")}</label>
    <select id=${id} value=${choice} data-testid="step-how" onChange=${(e) => onChange({ how: e.currentTarget.value })}>
      <option value="text">${t("caps.stepHowText")}</option>
      ${skills.map((s) => html`<option value=${`skill:${s.skillId}`}>${t("caps.stepHowSkill", { name: s.name, id: s.skillId })}</option>`)}
      <option value="tool">${t("caps.stepHowTool")}</option>
      <option value="drop">${t("caps.stepHowDrop")}</option>
    </select>
  </div>`;
}

// The caller's open drafts, newest first, each resumable (a draft is kept 24 h; leaving the page loses none).
export function OpenDrafts({ onResume, reloadKey }) {
  const state = useLoad(() => listAll("/user-capability-drafts?status=open"), [reloadKey]);
  return html`<section class="card" aria-labelledby="open-drafts-title" data-testid="open-drafts">
    <h2 id="open-drafts-title">${t("caps.openDrafts")}</h2>
    <${Loaded} state=${state}>
      ${(drafts) =>
        drafts.length === 0
          ? html`<${Empty} text=${t("caps.noOpenDrafts")} />`
          : html`<ul class="plain">
              ${drafts.map(
                (d) => html`<li key=${d.draftId} class="row" data-draft=${d.draftId}>
                  <span class="grow"><strong>${d.proposal ? d.proposal.displayName : firstLine(d.description)}</strong>
                    <span class="meta"> · ${t("caps.draftGaps", { n: d.gaps.length })} · ${t("caps.draftUpdated", { at: formatTime(d.updatedAt) })}</span></span>
                  <button type="button" class="quiet" aria-label=${t("caps.resumeLabel", { name: d.proposal ? d.proposal.displayName : firstLine(d.description) })}
                    onClick=${() => onResume(d)}>${t("caps.resume")}</button>
                </li>`,
              )}
            </ul>`}
    <//>
  </section>`;
}

function firstLine(text) {
  const line = String(text || "").split("\n").find((l) => l.trim()) || "";
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
}

export function DraftFlow({ skills, onConfirmed, onClose, initial }) {
  const [description, setDescription] = useState("");
  const [draft, setDraft] = useState(initial || null);
  const [answers, setAnswers] = useState({}); // gapId -> {text} | {binding}
  const [info, setInfo] = useState("");
  const action = useAction();
  const heading = useRef(null);
  useLayoutEffect(() => heading.current && heading.current.focus(), []);

  const errors = capabilityErrors(action.error);
  const schemaErrors = action.error && action.error.code === "schema_not_allowed" ? action.error.details.errors : [];
  const conflict = action.error && action.error.code === "draft_revision_conflict";
  const path = draft && `/user-capability-drafts/${encodeURIComponent(draft.draftId)}`;

  const took = (next) => {
    setDraft(next);
    setAnswers({});
    const first = next.gaps[0];
    focusAfterRender(first ? (stepOf(first) !== null ? "gap-0-how" : "gap-0-answer") : "draft-confirm");
  };
  const start = (event) => {
    event.preventDefault();
    action.run(async () => took(await post("/user-capability-drafts", { description })));
  };
  const answersBody = () => {
    const out = [];
    let broken = false;
    draft.gaps.forEach((gap) => {
      const answer = answers[gap.gapId];
      if (!answer) return;
      const how = answer.how || (gap.kind === "missing_binding" ? "tool" : "text");
      if (how === "drop") {
        out.push({ gapId: gap.gapId, drop: true });
      } else if (how.startsWith("skill:")) {
        out.push({ gapId: gap.gapId, text: how.slice("skill:".length) });
      } else if (how === "tool") {
        const { schemaText, jsonError, how: _how, text: _text, ...binding } = { ...emptyBinding(), ...answer };
        const parsed = parseSchema(schemaText);
        if (parsed.error) {
          broken = true;
          setAnswers((old) => ({ ...old, [gap.gapId]: { ...answer, jsonError: parsed.error } }));
          return;
        }
        out.push({ gapId: gap.gapId, binding: { ...binding, inputSchema: parsed.value } });
      } else if (answer.text && answer.text.trim()) {
        out.push({ gapId: gap.gapId, text: answer.text });
      }
    });
    return broken ? null : out;
  };
  const generate = (event) => {
    event.preventDefault();
    setInfo("");
    const body = answersBody();
    if (body === null) return;
    if (body.length === 0 && draft.gaps.length > 0) {
      setInfo(t("caps.answerFirst"));
      return;
    }
    action.run(async () => took(await post(`${path}/generate`, { answers: body })));
  };
  const regenerate = () => action.run(async () => took(await post(`${path}/generate`, { answers: [] })));
  const confirm = () =>
    action.run(async () => onConfirmed(await post(`${path}/confirm`, { revision: draft.revision })));

  // Errors of an answer carry its index in the body sent; the body holds the answered gaps in gap order.
  const answeredIndex = {};
  if (draft) {
    let n = 0;
    for (const gap of draft.gaps) if (answers[gap.gapId]) answeredIndex[gap.gapId] = n++;
  }

  return html`<section class="card editor" aria-labelledby="draft-title" data-testid="draft-flow">
    <div class="row">
      <h2 id="draft-title" class="grow" tabindex="-1" ref=${heading}>${t("caps.talkTitle")}</h2>
      <button type="button" class="quiet" onClick=${onClose}>${t("caps.close")}</button>
    </div>
    <p class="hint">${t("caps.talkIntro")}</p>
    ${!draft &&
    html`<form onSubmit=${start} novalidate>
      <label for="draft-description">${t("caps.describe")}</label>
      <textarea id="draft-description" rows="8" maxlength=${limits().draftDescription} value=${description}
        ...${invalid(errors, "description", "draft-description", "draft-description-hint")}
        onInput=${(e) => setDescription(e.currentTarget.value)}></textarea>
      <p id="draft-description-hint" class="hint">${t("caps.describeHint")} ${t("caps.stepsSyntax")}</p>
      <${FieldError} id="draft-description-error" messages=${errors.description} />
      <div class="row actions">
        <button type="submit" disabled=${action.busy}>${action.busy ? t("caps.starting") : t("caps.start")}</button>
      </div>
    </form>`}
    ${draft &&
    html`<p class="meta" data-testid="draft-revision">
        ${t("caps.revision", { r: draft.revision, status: t(`caps.draft.${draft.status}`), at: formatTime(draft.expiresAt) })}
      </p>
      <${ProposalView} proposal=${draft.proposal} skills=${skills} />
      ${draft.gaps.length > 0
        ? html`<form onSubmit=${generate} novalidate aria-labelledby="draft-gaps-title" data-testid="gaps">
            <h3 id="draft-gaps-title">${t("caps.gaps")}</h3>
            <ol class="plain">
              ${draft.gaps.map((gap, i) => {
                const answer = answers[gap.gapId] || {};
                const at = answeredIndex[gap.gapId];
                const gapErrors = at === undefined ? {} : errors;
                const setAnswer = (value) => setAnswers((old) => ({ ...old, [gap.gapId]: { ...(old[gap.gapId] || {}), ...value } }));
                const step = stepOf(gap);
                const how = answer.how || (gap.kind === "missing_binding" ? "tool" : "text");
                const stepsAsked = gap.path === "/workflow/steps";
                return html`<li class="card" data-gap=${gap.gapId} data-kind=${gap.kind}>
                  ${step !== null && gap.instruction &&
                  html`<p class="step-text" data-testid="gap-step"><strong>${t("caps.stepN", { n: step })}</strong> <span class="prewrap">${gap.instruction}</span></p>`}
                  <p id=${`gap-${i}-question`} class="prewrap"><strong>${i + 1}.</strong> ${gap.question}</p>
                  ${step !== null && html`<${StepChoice} gap=${gap} index=${i} skills=${skills} value=${answer} onChange=${setAnswer} />`}
                  ${how === "tool" &&
                  html`<${GapBinding} gap=${gap} index=${i} value=${{ ...emptyBinding(), ...answer }} onChange=${(v) => setAnswer(v)}
                      errors=${remapAnswerErrors(gapErrors, at, i)} schemaErrors=${answer.name ? schemaErrors.filter((e) => e.binding === answer.name) : []} />`}
                  ${how === "drop" && html`<p class="hint" data-testid="step-dropped">${t("caps.stepDropHint")}</p>`}
                  ${how === "text" &&
                  html`<label for=${`gap-${i}-answer`}>${t("caps.answer")}</label>
                      <textarea id=${`gap-${i}-answer`} rows=${stepsAsked ? 5 : 2} maxlength=${limits().draftAnswer} value=${answer.text || ""}
                        aria-describedby=${`gap-${i}-question ${stepsAsked ? `gap-${i}-syntax` : ""}`.trim()}
                        onInput=${(e) => setAnswer({ text: e.currentTarget.value })}></textarea>
                      ${stepsAsked && html`<p id=${`gap-${i}-syntax`} class="hint">${t("caps.stepsSyntax")}</p>`}
                      <${FieldError} id=${`gap-${i}-answer-error`} messages=${at === undefined ? null : errors[`answers.${at}.text`]} />`}
                </li>`;
              })}
            </ol>
            <div class="row actions">
              <button type="submit" disabled=${action.busy}>${action.busy ? t("caps.generating") : t("caps.generate")}</button>
            </div>
            <p class="hint" role="status" aria-live="polite">${info}</p>
          </form>`
        : html`<p class="hint">${t("caps.noGaps")}</p>`}
      ${draft.status === "open" &&
      draft.gaps.length === 0 &&
      draft.proposal &&
      html`<div class="row actions">
        <button type="button" id="draft-confirm" disabled=${action.busy} aria-describedby="draft-confirm-hint" onClick=${confirm}>
          ${action.busy ? t("caps.confirming") : t("caps.confirm")}
        </button>
        <span id="draft-confirm-hint" class="hint">${t("caps.confirmHint")}</span>
      </div>`}`}
    <${ErrorBox} error=${action.error} />
    ${conflict &&
    html`<div class="notice">
      <p>${t("caps.revisionConflict", { r: action.error.details.currentRevision })}</p>
      <button type="button" onClick=${regenerate}>${t("caps.regenerate")}</button>
    </div>`}
  </section>`;
}

// Errors at answers.<sent index>.binding.* shown at the form of gap <i>.
function remapAnswerErrors(errors, sentIndex, index) {
  if (sentIndex === undefined) return {};
  const out = {};
  const from = `answers.${sentIndex}.binding.`;
  for (const [key, messages] of Object.entries(errors)) {
    if (key.startsWith(from)) out[`answers.${index}.binding.${key.slice(from.length)}`] = messages;
  }
  return out;
}
