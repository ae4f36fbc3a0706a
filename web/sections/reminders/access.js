// The reminder skill and the grant it needs (proactive_message:write) in a scope.

export const SKILL = "goal-check-in-reminder";
export const PERMISSION = "proactive_message:write";

export const GRANT_LINK = `#/permissions?skill=${encodeURIComponent(SKILL)}&permission=${encodeURIComponent(PERMISSION)}`;

// Whether proactive_message:write is in force for this agent: an active grant in the user's scope or in
// the agent's own (the same two scopes the server's policy gate consults).
export function hasGrant(grants, agentId) {
  return grants.some(
    (g) =>
      g.skillId === SKILL &&
      g.permissionCode === PERMISSION &&
      g.status === "active" &&
      (g.scope.type === "user" || (g.scope.type === "agent" && g.scope.agentId === agentId)),
  );
}
