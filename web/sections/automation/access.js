// The grant an automation job's runner needs (memory-extraction's memory:write) in the job's scope.

export const RUNNER_SKILL = "memory-extraction";
export const RUNNER_PERMISSION = "memory:write";

export const isRunnerGrant = (g) => g.skillId === RUNNER_SKILL && g.permissionCode === RUNNER_PERMISSION && g.status === "active";

// Whether a job's runs will be skipped for want of the grant: the server runs a job for each target
// agent the grant covers (user scope, or the agent's own scope) and skips the run when none is covered.
export function lacksGrant(job, grants, agents) {
  const active = grants.filter(isRunnerGrant);
  if (active.some((g) => g.scope.type === "user")) return false;
  const covered = new Set(active.filter((g) => g.scope.type === "agent").map((g) => g.scope.agentId));
  const targets = job.agentId ? [job.agentId] : agents.map((a) => a.agentId);
  return !targets.some((id) => covered.has(id));
}
