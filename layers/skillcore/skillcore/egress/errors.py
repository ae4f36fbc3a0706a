"""The typed outcomes of an egress call. None of them carries the URL (it is a secret: a Dify URL holds its
key in the path), only the host where that is useful and a stable machine `reason`.

API mapping (done by the routes, not here): `Refused` -> 422 `url_not_allowed` with `details.reason`,
`UpstreamTimeout` -> 504 `upstream_timeout`, `ResponseTooLarge` and `UpstreamError` -> 502 `upstream_error`.
"""

from __future__ import annotations

# Every `Refused.reason`, stable: clients and the page show them. URL policy first, then addresses.
URL_REASONS = (
    "not_a_string",
    "too_long",
    "not_ascii",
    "invalid_characters",
    "malformed",
    "scheme_not_https",
    "userinfo",
    "query",
    "fragment",
    "port_not_443",
    "no_host",
    "idn_host",
    "ip_literal",
    "host_syntax",
    "domain_not_allowed",
)
ADDRESS_REASONS = (
    "unresolvable",
    "address_unspecified",
    "address_loopback",
    "address_private",
    "address_link_local",
    "address_metadata",
    "address_shared",
    "address_multicast",
    "address_reserved",
    "address_documentation",
    "address_benchmarking",
    "address_not_global",
)
# Refusals of the transport itself: a request that is not to the checked destination (e.g. a redirect that
# some caller tried to follow).
TRANSPORT_REASONS = ("other_destination",)
REASONS = URL_REASONS + ADDRESS_REASONS + TRANSPORT_REASONS


class EgressError(Exception):
    """Base class. `reason` is a stable machine code; the message never contains the URL."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Refused(EgressError):
    """The URL or one of its addresses is not allowed; nothing was sent."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        assert reason in REASONS, reason
        super().__init__(reason, message or f"the URL is not allowed: {reason}")


class UpstreamTimeout(EgressError):
    """The whole call did not finish within its deadline."""

    def __init__(self, message: str = "the endpoint did not answer in time") -> None:
        super().__init__("timeout", message)


class ResponseTooLarge(EgressError):
    """The answer was longer than the cap; reading stopped at the cap."""

    def __init__(self, limit: int) -> None:
        super().__init__("too_large", f"the endpoint's answer is over {limit} bytes")
        self.limit = limit


class UpstreamError(EgressError):
    """The endpoint could not be reached or answered badly: `reason` is `connect`, `tls`, `protocol`,
    `redirect` or `content_encoding`."""


def find_egress_error(error: BaseException) -> EgressError | None:
    """The EgressError inside `error`: itself, one of an exception group's, or a cause/context (libraries
    such as the MCP SDK wrap what the transport raised)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, EgressError):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return None
