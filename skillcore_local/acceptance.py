"""Which requests the local gateway accepts at all: its defence against other web pages on the developer's machine.

The gateway listens on a loopback address, but a browser on the same machine will send it whatever a page
elsewhere asks for. Two things stop such a page:

- **Host** (DNS rebinding): a page at `http://evil.example:3000` whose name is made to resolve to 127.0.0.1 talks
  to the gateway as its own origin, and could read `POST /_local/token`'s admin token. Its requests carry
  `Host: evil.example:3000`, so the gateway accepts only a Host that is a loopback name or address with the
  port it serves on (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`) or one the developer configured in
  `SKILLS_LOCAL_ALLOWED_HOSTS` (comma-separated, `name` or `name:port`; a name alone means on the serving port).
  Anything else, a missing Host or more than one, is `421 misdirected_request`.
- **Origin** (cross-site requests): a page elsewhere may still POST to `http://127.0.0.1:PORT/_local/...` (a
  form, a no-cors fetch). It cannot read the answer, but a request to `/_local/*` changes the stack (a scan,
  faults) or mints a token. So a request to `/_local/*` by any method but GET and HEAD is refused with
  `403 forbidden` when it carries an `Origin` other than the gateway's own (`http://` + the request's accepted
  Host), or a `Sec-Fetch-Site` other than `same-origin` or `none`. A request with neither header (curl, the
  tests' clients) is accepted: it comes from no web page.

These are local-only rules: API Gateway answers only its own host names, and the deployed API has no `/_local`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from skillcore_local.responses import HttpResponse, error_response

ALLOWED_HOSTS_VARIABLE = "SKILLS_LOCAL_ALLOWED_HOSTS"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD"})
SAME_ORIGIN_FETCH_SITES = frozenset({"same-origin", "none"})


def allowed_hosts(port: int, configured: Iterable[str] = ()) -> frozenset[str]:
    """The Host header values accepted, lower-cased: the loopback names on `port`, and the configured ones (a name
    without a port is taken on `port`)."""
    hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}
    for entry in configured:
        entry = entry.strip().lower()
        if not entry:
            continue
        has_port = entry.rsplit(":", 1)[-1].isdigit() and (not entry.startswith("[") or "]:" in entry)
        hosts.add(entry if has_port else f"{entry}:{port}")
    return frozenset(hosts)


def configured_hosts(env: Mapping[str, str] | None = None) -> list[str]:
    value = (os.environ if env is None else env).get(ALLOWED_HOSTS_VARIABLE) or ""
    return [entry.strip() for entry in value.split(",") if entry.strip()]


def _values(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    return [value.strip() for key, value in headers if key.lower() == name]


def refusal(method: str, path: str, headers: Sequence[tuple[str, str]],
            hosts: frozenset[str]) -> HttpResponse | None:
    """The answer to a request the gateway does not accept, or None when it is accepted."""
    host = _values(headers, "host")
    if len(host) != 1 or host[0].lower() not in hosts:
        shown = host[0] if len(host) == 1 else f"{len(host)} Host headers"
        return error_response(421, "misdirected_request",
                              f"this local gateway does not serve {shown!r}: use one of {sorted(hosts)}, or add the "
                              f"name to {ALLOWED_HOSTS_VARIABLE}")
    local = path == "/_local" or path.startswith("/_local/")
    if not local or method.upper() in SAFE_METHODS:
        return None
    own = f"http://{host[0].lower()}"
    origins = _values(headers, "origin")
    if any(origin.lower() != own for origin in origins):
        return error_response(403, "forbidden", f"{path} does not take requests from another origin",
                              {"origin": origins[0] if len(origins) == 1 else origins})
    sites = _values(headers, "sec-fetch-site")
    if any(site.lower() not in SAME_ORIGIN_FETCH_SITES for site in sites):
        return error_response(403, "forbidden", f"{path} does not take requests from another site",
                              {"secFetchSite": sites[0] if len(sites) == 1 else sites})
    return None
