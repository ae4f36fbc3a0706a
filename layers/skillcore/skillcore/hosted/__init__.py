"""Hosted external workflows (seed 004 "另一条路线：托管外部工作流", docs/contract.md "Hosted external workflows"): a user's
remote MCP endpoints, their pinned tool snapshots, sealed secrets, and the proxied calls. The connection itself
is egress/'s; the store is hosted/endpoint_store.py."""
