// The editor's model: a capability as a form, and the form as the body the API takes.

let stepSerial = 0;
export const withKey = (step) => ({ ...step, key: ++stepSerial });

export function formOf(capability, skills) {
  if (!capability) {
    return {
      name: "",
      displayName: "",
      whenToUse: [""],
      objective: "",
      steps: [withKey({ kind: "platformCapability", capabilityId: (skills[0] && skills[0].skillId) || "", instruction: "" })],
      completionCriteria: "",
    };
  }
  return {
    name: capability.name,
    displayName: capability.displayName,
    whenToUse: [...capability.whenToUse],
    objective: capability.workflow.objective,
    steps: capability.workflow.steps.map((s) => withKey({ ...s })),
    completionCriteria: capability.workflow.completionCriteria,
  };
}

function stepBody(step) {
  if (step.kind === "localTool") {
    return { kind: "localTool", toolName: step.toolName, hostProfile: step.hostProfile, instruction: step.instruction };
  }
  return { kind: "platformCapability", capabilityId: step.capabilityId, instruction: step.instruction };
}

// The body's platformCapabilityIds are those the steps use, in order of first use: nothing is declared that no
// step needs (the server would narrow it away from a protocol anyway).
export function bodyOf(form) {
  const steps = form.steps.map(stepBody);
  const platformCapabilityIds = [
    ...new Set(steps.filter((s) => s.kind === "platformCapability").map((s) => s.capabilityId)),
  ];
  return {
    displayName: form.displayName,
    whenToUse: form.whenToUse,
    workflow: { objective: form.objective, steps, completionCriteria: form.completionCriteria },
    platformCapabilityIds,
  };
}

// An error at /platformCapabilityIds/i is shown at the first step that uses that id.
export function remapDeclared(errors, body) {
  const out = { ...errors };
  for (const key of Object.keys(errors)) {
    const match = /^platformCapabilityIds\.(\d+)$/.exec(key);
    if (!match) continue;
    const id = body.platformCapabilityIds[Number(match[1])];
    const index = body.workflow.steps.findIndex((s) => s.kind === "platformCapability" && s.capabilityId === id);
    if (index >= 0) {
      const target = `workflow.steps.${index}.capabilityId`;
      out[target] = [...(out[target] || []), ...errors[key]];
      delete out[key];
    }
  }
  return out;
}

export const sameForm = (a, b) => JSON.stringify(bodyOf(a)) === JSON.stringify(bodyOf(b)) && a.name === b.name;
