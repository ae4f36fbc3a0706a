"""Per-operation approvals: a user's consent to one exact operation (endpoint, tool, canonical arguments),
used at most once and expiring after ten minutes. PolicyGate asks for one where a per-operation permission's
operation requires it (policy/gate.py); the store is approvals/store.py."""
