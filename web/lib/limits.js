// The server's limits (lengths in characters, counts in items) as the profile answers them (GET and PUT /rpc/me,
// `limits`): the page shows and enforces the numbers the server validates with and keeps no copy of them. The
// shell sets them from the profile it loads before any section renders, and again whenever the profile changes.
let current = {};

export function setLimits(limits) {
  current = limits || {};
}

// limits().chatMessage -> 4000 (say); a name the server does not answer is undefined (no maxlength at all).
export function limits() {
  return current;
}
