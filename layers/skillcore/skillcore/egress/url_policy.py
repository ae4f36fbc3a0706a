"""The URL policy of docs/contract.md "Hosted external workflows": what a hosted endpoint's URL may look like.

Parsed with `httpx2.URL`, the parser of the HTTP client that the MCP SDK (mcp 2.x) depends on and that
`transport` sends with: the host checked here is the host the request goes to. Before the parser sees it, the
raw text is held to a stricter shape than the parser's (parsers disagree at the edges, so anything at an edge
is refused rather than interpreted):

- at most 2048 characters, printable ASCII only (no spaces, tabs, control characters), no backslash;
- no `?` and no `#` anywhere (a query and a fragment are refused, even empty ones the parser would drop);
- the text starts with `https://` (any case) and its authority has no `@` (user info, even empty).

Then on the parsed URL: scheme `https`, port 443 (explicit or the default), a host name that is

- ASCII: an internationalised name is refused in both forms (Unicode is not ASCII; an `xn--` label is
  refused as `idn_host`), so the host a person reads on the page is the host connected to;
- not an IP literal, nor a name the C resolver would read as one (`127.1`, `2130706433`, `0x7f.1`): a host
  whose last label is all digits or hexadecimal with `0x` is `ip_literal`;
- LDH labels of 1-63 characters, 253 in all, no trailing dot (`host_syntax`);
- equal to an entry of the allow-list or below it on a label boundary (`example.com` allows
  `api.example.com`, not `badexample.com`); an empty allow-list allows nothing.

Each refusal raises `Refused` with its stable `reason` (errors.URL_REASONS).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from msgspec import Struct

from skillcore.egress.errors import Refused

MAX_URL_LENGTH = 2048
MAX_HOST_LENGTH = 253
PORT = 443
_PRINTABLE = re.compile(r"[\x21-\x7e]*")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_NUMERIC = re.compile(r"[0-9]+|0x[0-9a-f]*")


class Destination(Struct, frozen=True, kw_only=True):
    """A URL that passed the policy: the host to resolve and check, and the URL to send to."""

    host: str
    port: int
    url: str  # https://host/path from the parsed parts; a secret like the input


def check_url(url: object, allowed_domains: Iterable[str]) -> Destination:
    import httpx2

    if not isinstance(url, str):
        raise Refused("not_a_string")
    if len(url) > MAX_URL_LENGTH:
        raise Refused("too_long")
    if not url.isascii():
        raise Refused("not_ascii")
    if not _PRINTABLE.fullmatch(url) or "\\" in url:
        raise Refused("invalid_characters")
    if "#" in url:
        raise Refused("fragment")
    if "?" in url:
        raise Refused("query")
    if url[:8].lower() != "https://":
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        raise Refused("scheme_not_https" if scheme and scheme != "https" else "malformed")
    authority = url[8:].split("/", 1)[0]
    if "@" in authority:
        raise Refused("userinfo")
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, ValueError, TypeError):
        raise Refused("malformed") from None
    if parsed.scheme != "https":
        raise Refused("scheme_not_https")
    if parsed.userinfo:
        raise Refused("userinfo")
    if parsed.query or parsed.fragment:
        raise Refused("query" if parsed.query else "fragment")
    if parsed.port not in (None, PORT):
        raise Refused("port_not_443")
    host = check_host(parsed.raw_host.decode("ascii"), parsed.host)
    if not domain_allowed(host, allowed_domains):
        raise Refused("domain_not_allowed")
    # Rebuilt from the parsed parts: the parser's own str() keeps ":443" for an upper-case scheme.
    return Destination(host=host, port=PORT, url=f"https://{host}{parsed.raw_path.decode('ascii')}")


def check_host(raw_host: str, host: str) -> str:
    """The host name of a URL (`raw_host` as sent, `host` as the parser decoded it), lower case."""
    if not raw_host:
        raise Refused("no_host")
    if raw_host != host or raw_host.isascii() is False:
        raise Refused("idn_host")
    if ":" in raw_host or raw_host.startswith("["):
        raise Refused("ip_literal")  # IPv6 literal, already unbracketed by the parser
    name = raw_host.lower()
    labels = name.split(".")
    if _NUMERIC.fullmatch(labels[-1]):
        raise Refused("ip_literal")
    if any(label.startswith("xn--") for label in labels):
        raise Refused("idn_host")
    if len(name) > MAX_HOST_LENGTH or not all(_LABEL.fullmatch(label) for label in labels):
        raise Refused("host_syntax")
    return name


def domain_allowed(host: str, allowed_domains: Iterable[str]) -> bool:
    """Suffix match on whole labels."""
    return any(host == domain or host.endswith("." + domain) for domain in allowed_domains)


def parse_allowed_domains(raw: str) -> tuple[str, ...]:
    """`SKILLS_HOSTED_ALLOWED_DOMAINS`: comma-separated domains, each a valid ASCII host name."""
    domains = []
    for item in raw.split(","):
        domain = item.strip().lower()
        if not domain:
            continue
        labels = domain.split(".")
        if (len(domain) > MAX_HOST_LENGTH or not all(_LABEL.fullmatch(label) for label in labels)
                or _NUMERIC.fullmatch(labels[-1]) or any(label.startswith("xn--") for label in labels)):
            raise ValueError(f"SKILLS_HOSTED_ALLOWED_DOMAINS: {domain!r} is not an ASCII domain name")
        domains.append(domain)
    return tuple(dict.fromkeys(domains))
