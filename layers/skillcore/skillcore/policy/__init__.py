"""Permissions: PermissionGrant, the pure PolicyGate decision, and the typed audit record."""
