// Decisions on approvals made in this tab, for the forms waiting on them: a try-it call that needs an approval
// waits here for it, and is sent again with the approval as soon as it is approved below (approvals.js).
const waiting = new Map(); // approvalId -> callback(approval)

// Calls `callback(approval)` once, when `approvalId` is decided in this tab; returns the way to stop waiting.
export function whenDecided(approvalId, callback) {
  waiting.set(approvalId, callback);
  return () => {
    if (waiting.get(approvalId) === callback) waiting.delete(approvalId);
  };
}

export function announceDecision(approval) {
  const callback = waiting.get(approval.approvalId);
  if (!callback) return;
  waiting.delete(approval.approvalId);
  callback(approval);
}
