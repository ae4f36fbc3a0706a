"""Egress: the one way out to a user-given host (hosted external workflows, seed 004; docs/contract.md "Hosted external
workflows"). No other module opens a connection to a host a user named; tests/unit/test_egress_boundary.py
enforces it.

One job per module, in the order a call goes through them:

1. `url_policy`: the URL itself (https, port 443, no user info/query/fragment, ASCII host name on the operator's
   allow-list matched on whole labels, no IP literal). Parsed by `httpx2.URL`, the parser of the HTTP client the
   MCP SDK (mcp 2.x) uses, so the policy and the client cannot disagree about which host a URL names.
2. `resolver`: resolve the name once (injectable; local-only fixed answers for the test stack).
3. `addresses`: every resolved address must be public, after unwrapping the IPv6 forms that carry an IPv4
   address (mapped, compatible, NAT64, 6to4, Teredo).
4. `transport`: an httpx2 transport that connects only to the checked addresses, keeping the host name for SNI,
   the certificate check and `Host`; no redirects, no environment proxies, one deadline for the whole call,
   a cap on the answer.
5. `client`: puts 1-4 together: `async with open_client(url, settings) as client: ...`.

`settings` reads `SKILLS_HOSTED_ALLOWED_DOMAINS` and the local-only settings once, at the edge; `errors` has the
typed outcomes (`Refused` with a stable `reason`, `UpstreamTimeout`, `ResponseTooLarge`, `UpstreamError`).
Importing this package imports nothing heavy; httpx2 is loaded by `url_policy`, `transport` and `client`.
"""
