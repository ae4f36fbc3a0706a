"""Per-user limits: request rates by route class and the daily model budget (docs/contract.md "Limits")."""
