"""An egress call put together: policy, one resolution, the address check, then a client whose transport
can reach only what was checked.

    async with open_client(url, settings) as client:
        response = await client.post(url, json=...)

`check_destination` is the same first half on its own (registration re-checks a URL without sending).
The deadline starts when `open_client` is entered and covers resolution and every request made with the
client.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import lru_cache

import anyio
import httpx2
from msgspec import Struct

from skillcore.egress import addresses
from skillcore.egress.addresses import IPAddress
from skillcore.egress.errors import UpstreamTimeout
from skillcore.egress.resolver import FixedNames, Resolver, system_resolver
from skillcore.egress.settings import EgressSettings
from skillcore.egress.transport import DEADLINE_SECONDS, MAX_BODY_BYTES, Deadline, EgressTransport, OnFailure
from skillcore.egress.url_policy import Destination, check_url


class EgressLimits(Struct, frozen=True, kw_only=True):
    deadline_seconds: float = DEADLINE_SECONDS
    max_body_bytes: int = MAX_BODY_BYTES


class Target(Struct, frozen=True, kw_only=True):
    destination: Destination
    addresses: tuple[IPAddress, ...]


def default_resolver(settings: EgressSettings) -> Resolver:
    return FixedNames(settings.local_resolve) if settings.local_resolve else system_resolver


async def check_destination(url: object, settings: EgressSettings, *, resolver: Resolver | None = None,
                            deadline: Deadline | None = None) -> Target:
    """The URL policy, then one resolution and the check of every address. Raises `Refused`."""
    destination = check_url(url, settings.allowed_domains)
    deadline = deadline or Deadline(DEADLINE_SECONDS)
    resolve = resolver or default_resolver(settings)
    try:
        with anyio.fail_after(deadline.remaining()):
            answers = await resolve(destination.host)
    except TimeoutError:
        raise UpstreamTimeout("the endpoint's name did not resolve in time") from None
    return Target(destination=destination, addresses=addresses.check(answers, settings.local_allow_addresses))


@lru_cache(maxsize=4)
def ssl_context(extra_ca_bundle: str | None) -> ssl.SSLContext:
    """The system's trust store (plus the local-only extra bundle), hostname checked, TLS 1.2 at least."""
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if extra_ca_bundle:
        context.load_verify_locations(cafile=extra_ca_bundle)
    return context


def limits_of(settings: EgressSettings, limits: EgressLimits | None) -> EgressLimits:
    """The limits given, else the settings' deadline (a proxied call's, cut to the invocation by
    hosted/service.egress_now) with the default answer cap."""
    return limits or EgressLimits(deadline_seconds=settings.deadline_seconds)


@asynccontextmanager
async def open_client(url: object, settings: EgressSettings, *, resolver: Resolver | None = None,
                      limits: EgressLimits | None = None,
                      deadline: Deadline | None = None,
                      on_failure: OnFailure | None = None) -> AsyncIterator[httpx2.AsyncClient]:
    """`deadline`, when given, is the caller's own (started from `limits_of`), for it to bound its waits between
    requests with the same clock. `on_failure` is told of every EgressError the transport raises, before it is
    raised (a library between the caller and the transport may swallow it: egress/mcp_session.py)."""
    limits = limits_of(settings, limits)
    deadline = deadline or Deadline(limits.deadline_seconds)
    target = await check_destination(url, settings, resolver=resolver, deadline=deadline)
    transport = EgressTransport(target.destination, target.addresses, ssl_context=ssl_context(settings.local_ca_bundle),
                                deadline=deadline, max_body=limits.max_body_bytes, on_failure=on_failure,
                                connect_ports=settings.connect_ports())
    async with httpx2.AsyncClient(transport=transport, follow_redirects=False, trust_env=False,
                                  timeout=limits.deadline_seconds) as client:
        yield client
