"""Per-version outcome counters of installed skills' tool calls (docs/packages.md "Canary and automatic rollback")."""
