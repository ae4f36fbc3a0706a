// The capability editor: name, display name, when-to-use phrases, objective, ordered steps, completion criteria.
import { useEffect, useState } from "preact/hooks";
import { post, put } from "../../lib/api.js";
import { FieldError } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { skillName } from "../../lib/names.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, focusAfterRender, useAction, useNotice } from "../../lib/ui.js";
import { capabilityErrors, invalid } from "./errors.js";
import { bodyOf, formOf, remapDeclared, sameForm, withKey } from "./model.js";

function Counter({ id, value }) {
  return html`<p id=${id} class="hint">${t("caps.counter", { n: value.length, max: limits().capabilityText })}</p>`;
}

function StepEditor({ step, index, count, skills, bindings, errors, readOnly, onChange, onMove, onRemove }) {
  const n = index + 1;
  const id = `cap-step-${index}`;
  const key = `workflow.steps.${index}`;
  const setKind = (kind) => {
    if (kind === "localTool") {
      const first = bindings[0];
      onChange({ kind, toolName: first ? first.name : "", hostProfile: first ? first.hostProfile : "", instruction: step.instruction });
    } else {
      onChange({ kind, capabilityId: (skills[0] && skills[0].skillId) || "", instruction: step.instruction });
    }
  };
  const pickBinding = (name) => {
    const binding = bindings.find((b) => b.name === name);
    onChange({ ...step, toolName: name, hostProfile: binding ? binding.hostProfile : step.hostProfile });
  };
  const refErrors = [
    ...(errors[`${key}.capabilityId`] || []),
    ...(errors[`${key}.toolName`] || []),
    ...(errors[`${key}.hostProfile`] || []),
    ...(errors[key] || []),
  ];
  const refAria = {
    "aria-invalid": refErrors.length ? "true" : undefined,
    "aria-describedby": refErrors.length ? `${id}-ref-error` : undefined,
  };
  const known = bindings.some((b) => b.name === step.toolName);
  return html`<li class="step card" data-testid="step" data-step=${index}>
    <div class="row">
      <h4 class="grow" id=${`${id}-title`}>${t("caps.stepLabel", { n })}</h4>
      ${!readOnly &&
      html`<div class="row" role="group" aria-labelledby=${`${id}-title`}>
        <button type="button" class="quiet" id=${`${id}-up`} disabled=${index === 0} aria-label=${t("caps.moveUp", { n })}
          onClick=${() => onMove(index, -1)}>↑ ${t("caps.up")}</button>
        <button type="button" class="quiet" id=${`${id}-down`} disabled=${index === count - 1}
          aria-label=${t("caps.moveDown", { n })} onClick=${() => onMove(index, 1)}>↓ ${t("caps.down")}</button>
        <button type="button" class="danger" disabled=${count === 1} aria-label=${t("caps.removeStep", { n })}
          onClick=${() => onRemove(index)}>${t("caps.remove")}</button>
      </div>`}
    </div>
    <div class="row">
      <div>
        <label for=${`${id}-kind`}>${t("caps.stepKind", { n })}</label>
        <select id=${`${id}-kind`} value=${step.kind} onChange=${(e) => setKind(e.currentTarget.value)}>
          <option value="platformCapability">${t("caps.kind.platformCapability")}</option>
          <option value="localTool" disabled=${bindings.length === 0 && step.kind !== "localTool"}>${t("caps.kind.localTool")}</option>
        </select>
      </div>
      ${step.kind === "localTool"
        ? html`<div class="grow">
            <label for=${`${id}-binding`}>${t("caps.stepBinding", { n })}</label>
            <select id=${`${id}-binding`} value=${step.toolName} ...${refAria} onChange=${(e) => pickBinding(e.currentTarget.value)}>
              ${!known && html`<option value=${step.toolName}>${step.toolName}</option>`}
              ${bindings.map((b) => html`<option value=${b.name}>${b.name} (${b.hostProfile} · ${b.mcpServerId}/${b.mcpToolName})</option>`)}
            </select>
          </div>`
        : html`<div class="grow">
            <label for=${`${id}-capability`}>${t("caps.stepCapability", { n })}</label>
            <select id=${`${id}-capability`} value=${step.capabilityId} ...${refAria}
              onChange=${(e) => onChange({ ...step, capabilityId: e.currentTarget.value })}>
              ${!skills.some((s) => s.skillId === step.capabilityId) && html`<option value=${step.capabilityId}>${step.capabilityId}</option>`}
              ${skills.map((s) => html`<option value=${s.skillId}>${skillName(s)}</option>`)}
            </select>
          </div>`}
    </div>
    <${FieldError} id=${`${id}-ref-error`} messages=${refErrors} />
    ${step.kind === "localTool" && bindings.length === 0 && html`<p class="hint">${t("caps.noBindings")}</p>`}
    <label for=${`${id}-instruction`}>${t("caps.stepInstruction", { n })}</label>
    <textarea id=${`${id}-instruction`} maxlength=${limits().capabilityText} value=${step.instruction}
      ...${invalid(errors, `${key}.instruction`, `${id}-instruction`, `${id}-instruction-count`)}
      onInput=${(e) => onChange({ ...step, instruction: e.currentTarget.value })}></textarea>
    <${Counter} id=${`${id}-instruction-count`} value=${step.instruction} />
    <${FieldError} id=${`${id}-instruction-error`} messages=${errors[`${key}.instruction`]} />
  </li>`;
}

export function CapabilityForm({ capability, skills, onSaved, onCreated, onDirty, onReload }) {
  const creating = !capability;
  const [form, setForm] = useState(() => formOf(capability, skills));
  const [saved, setSaved] = useState(() => formOf(capability, skills));
  const [notice, setNotice] = useNotice();
  const action = useAction();
  const readOnly = capability && capability.status === "active";
  const bindings = capability ? capability.toolBindings : [];
  const body = bodyOf(form);
  const errors = remapDeclared(capabilityErrors(action.error), body);
  const conflict = action.error && action.error.code === "version_conflict";
  const hasFieldErrors = Object.keys(errors).length > 0;

  const dirty = !sameForm(form, saved);
  useEffect(() => onDirty(dirty), [dirty]);

  // A capability saved, activated or reloaded elsewhere in the editor: take its stored state.
  useEffect(() => {
    if (!capability) return;
    const fresh = formOf(capability, skills);
    setSaved(fresh);
    setForm((old) => (readOnly || sameForm(old, saved) ? fresh : old));
  }, [capability && capability.version, capability && capability.status]);

  const set = (field) => (value) => setForm((old) => ({ ...old, [field]: value }));
  const setTrigger = (i, value) => set("whenToUse")(form.whenToUse.map((w, j) => (j === i ? value : w)));
  const addTrigger = () => {
    set("whenToUse")([...form.whenToUse, ""]);
    focusAfterRender(`cap-trigger-${form.whenToUse.length}`);
  };
  const removeTrigger = (i) => {
    set("whenToUse")(form.whenToUse.filter((_, j) => j !== i));
    focusAfterRender(`cap-trigger-${Math.max(0, i - 1)}`);
  };
  const setStep = (i, step) => set("steps")(form.steps.map((s, j) => (j === i ? { ...step, key: s.key } : s)));
  const moveStep = (i, delta) => {
    const j = i + delta;
    if (j < 0 || j >= form.steps.length) return;
    const steps = [...form.steps];
    [steps[i], steps[j]] = [steps[j], steps[i]];
    set("steps")(steps);
    // The focus follows the step it moved, onto the same button (or the other one at an end).
    const edge = (delta < 0 && j === 0) || (delta > 0 && j === steps.length - 1);
    focusAfterRender(`cap-step-${j}-${(delta < 0) !== edge ? "up" : "down"}`);
  };
  const removeStep = (i) => {
    set("steps")(form.steps.filter((_, j) => j !== i));
    focusAfterRender("cap-add-step");
  };
  const addStep = () => {
    set("steps")([
      ...form.steps,
      withKey({ kind: "platformCapability", capabilityId: (skills[0] && skills[0].skillId) || "", instruction: "" }),
    ]);
    focusAfterRender(`cap-step-${form.steps.length}-kind`);
  };

  const submit = (event) => {
    event.preventDefault();
    setNotice("");
    action.run(async () => {
      if (creating) {
        const created = await post("/user-capabilities", { name: form.name, ...body });
        onCreated(created, t("caps.created", { name: created.displayName }));
        return;
      }
      const updated = await put(`/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}`, {
        expectedVersion: capability.version,
        ...body,
      });
      setSaved(form);
      setNotice(t("caps.saved", { name: updated.displayName, v: updated.version }));
      onSaved(updated);
    });
  };

  const reload = async () => {
    action.clear();
    const fresh = await onReload();
    if (fresh) {
      setForm(formOf(fresh, skills));
      setSaved(formOf(fresh, skills));
    }
  };

  const fieldset = html`<fieldset class="plain" disabled=${readOnly}>
    ${creating &&
    html`<label for="cap-name">${t("caps.name")}</label>
      <input id="cap-name" value=${form.name} maxlength=${limits().capabilityName} autocomplete="off" spellcheck="false"
        ...${invalid(errors, "name", "cap-name", "cap-name-hint")} onInput=${(e) => set("name")(e.currentTarget.value)} />
      <p id="cap-name-hint" class="hint">${t("caps.nameHint", { max: limits().capabilityName })}</p>
      <${FieldError} id="cap-name-error" messages=${errors.name} />`}
    <label for="cap-display-name">${t("caps.displayName")}</label>
    <input id="cap-display-name" value=${form.displayName} maxlength=${limits().capabilityDisplayName}
      ...${invalid(errors, "displayName", "cap-display-name")} onInput=${(e) => set("displayName")(e.currentTarget.value)} />
    <${FieldError} id="cap-display-name-error" messages=${errors.displayName} />

    <fieldset class="tools" aria-describedby="cap-triggers-hint">
      <legend>${t("caps.whenToUse")}</legend>
      <p id="cap-triggers-hint" class="hint">${t("caps.whenToUseHint", { count: limits().capabilityTriggers, max: limits().capabilityTrigger })}</p>
      <ul class="plain">
        ${form.whenToUse.map(
          (value, i) => html`<li class="row">
            <label class="inline" for=${`cap-trigger-${i}`}>${t("caps.trigger", { n: i + 1 })}</label>
            <input id=${`cap-trigger-${i}`} class="grow" value=${value} maxlength=${limits().capabilityTrigger}
              ...${invalid(errors, `whenToUse.${i}`, `cap-trigger-${i}`)} onInput=${(e) => setTrigger(i, e.currentTarget.value)} />
            ${!readOnly &&
            html`<button type="button" class="quiet" disabled=${form.whenToUse.length === 1}
              aria-label=${t("caps.removeTrigger", { n: i + 1 })} onClick=${() => removeTrigger(i)}>${t("caps.remove")}</button>`}
            <${FieldError} id=${`cap-trigger-${i}-error`} messages=${errors[`whenToUse.${i}`]} />
          </li>`,
        )}
      </ul>
      <${FieldError} id="cap-triggers-error" messages=${errors.whenToUse} />
      ${!readOnly &&
      html`<button type="button" class="quiet" disabled=${form.whenToUse.length >= limits().capabilityTriggers} onClick=${addTrigger}>
        ${t("caps.addTrigger")}
      </button>`}
    </fieldset>

    <label for="cap-objective">${t("caps.objective")}</label>
    <textarea id="cap-objective" maxlength=${limits().capabilityText} value=${form.objective}
      ...${invalid(errors, "workflow.objective", "cap-objective", "cap-objective-count")}
      onInput=${(e) => set("objective")(e.currentTarget.value)}></textarea>
    <${Counter} id="cap-objective-count" value=${form.objective} />
    <${FieldError} id="cap-objective-error" messages=${errors["workflow.objective"]} />

    <h3 id="cap-steps-title">${t("caps.stepsTitle")}</h3>
    ${creating && html`<p class="hint">${t("caps.bindingsAfterCreate")}</p>`}
    <ol class="plain steps" aria-labelledby="cap-steps-title">
      ${form.steps.map(
        (step, i) => html`<${StepEditor} key=${step.key} step=${step} index=${i} count=${form.steps.length} skills=${skills}
          bindings=${bindings} errors=${errors} readOnly=${readOnly}
          onChange=${(s) => setStep(i, s)} onMove=${moveStep} onRemove=${removeStep} />`,
      )}
    </ol>
    <${FieldError} id="cap-steps-error" messages=${errors["workflow.steps"]} />
    ${!readOnly &&
    html`<button type="button" id="cap-add-step" class="quiet" disabled=${form.steps.length >= limits().capabilitySteps} onClick=${addStep}>
      ${t("caps.addStep")}
    </button>`}

    <label for="cap-completion">${t("caps.completion")}</label>
    <textarea id="cap-completion" maxlength=${limits().capabilityText} value=${form.completionCriteria}
      ...${invalid(errors, "workflow.completionCriteria", "cap-completion", "cap-completion-count")}
      onInput=${(e) => set("completionCriteria")(e.currentTarget.value)}></textarea>
    <${Counter} id="cap-completion-count" value=${form.completionCriteria} />
    <${FieldError} id="cap-completion-error" messages=${errors["workflow.completionCriteria"]} />
  </fieldset>`;

  return html`<form onSubmit=${submit} novalidate data-testid="capability-form">
    ${fieldset}
    ${!readOnly &&
    html`<div class="row actions">
      <button type="submit" disabled=${action.busy}>
        ${action.busy ? t("caps.saving") : creating ? t("caps.createSubmit") : t("caps.save")}
      </button>
    </div>`}
    <p class="hint" role="status" aria-live="polite" data-testid="form-notice">${notice}</p>
    ${hasFieldErrors && html`<p class="field-error">${t("caps.errorsBelow")}</p>`}
    ${action.error && action.error.code === "unsafe_text" && html`<p class="hint">${t("caps.filterNote")}</p>`}
    <${ErrorBox} error=${action.error} />
    ${conflict &&
    html`<div class="notice" data-testid="conflict">
      <p>${t("caps.conflict", { v: action.error.details.currentVersion })}</p>
      <button type="button" onClick=${reload}>${t("caps.reload")}</button>
    </div>`}
  </form>`;
}
