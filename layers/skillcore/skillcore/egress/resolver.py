"""Name resolution, done once per call: the addresses it returns are checked and then the only ones connected
to (transport), so a second, different DNS answer never reaches a socket.

A resolver is any `async (host) -> list of address strings`; tests inject fakes. `system_resolver` asks the
operating system (getaddrinfo, TCP, port 443). `FixedNames` answers some names from a table before falling back
to another resolver: the local-only `SKILLS_LOCAL_HOSTED_RESOLVE` (the answers are checked like any other).
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, Mapping

from skillcore.egress.errors import Refused

Resolver = Callable[[str], Awaitable[list[str]]]


async def system_resolver(host: str) -> list[str]:
    import anyio

    try:
        answers = await anyio.getaddrinfo(host, 443, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise Refused("unresolvable") from None
    return [str(sockaddr[0]) for _family, _type, _proto, _name, sockaddr in answers]


class FixedNames:
    """Answers the names of `table` (lower case name -> addresses), asks `fallback` for every other name."""

    def __init__(self, table: Mapping[str, tuple[str, ...]], fallback: Resolver = system_resolver) -> None:
        self.table = {name.lower(): tuple(addresses) for name, addresses in table.items()}
        self.fallback = fallback

    async def __call__(self, host: str) -> list[str]:
        fixed = self.table.get(host.lower())
        if fixed is not None:
            return list(fixed)
        return await self.fallback(host)
