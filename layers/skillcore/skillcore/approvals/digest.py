"""The canonical form of an operation's arguments (RFC 8785, JSON Canonicalization Scheme) and what is
derived from it: the digest an approval is bound to, and the preview its owner reads.

The same arguments in any key order or number spelling give the same digest (RFC 8785 fixes both), so an
approval cannot be replayed for different arguments and is not lost to a re-ordered object.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from skillcore.approvals.models import PREVIEW_MAX_CHARS


def canonical(arguments: dict[str, Any]) -> bytes:
    return rfc8785.dumps(arguments)


def arguments_digest(arguments: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(arguments)).hexdigest()


def arguments_preview(arguments: dict[str, Any]) -> str:
    text = canonical(arguments).decode("utf-8")
    if len(text) <= PREVIEW_MAX_CHARS:
        return text
    return text[: PREVIEW_MAX_CHARS - 1] + "…"
