"""Local tokens and the local stand-in for the HTTP API JWT authorizer.

Deployed, Cognito signs RS256 tokens and API Gateway checks them; locally there is no key server, so tokens
are HS256 with a shared secret. Everything else follows the authorizer: a Bearer token in `Authorization`,
issuer and audience checked, `exp` required, and the verified claims handed to the function as strings.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from typing import Any

import jwt
from jwt.warnings import InsecureKeyLengthWarning

ISSUER = "skillcore-local"
AUDIENCE = "skillcore"
ALGORITHM = "HS256"
DEFAULT_SECRET = "skillcore-local-secret"
DEFAULT_TTL_SECONDS = 12 * 3600  # a working day: long enough that `make token` is not a chore
ADMIN_GROUP = "admin"
# The two kinds of caller (docs/contract.md): a person (the page's sign-in) and an agent host (the MCP face).
KINDS = ("person", "host")
HOST_SCOPE = "skillcore/host"  # skillcore/api/http.py reads a token with it as an agent host's
HOST_CLIENT_ID = "skillcore-local-host"
PERSON_CLIENT_ID = "skillcore-local-web"

# The contract fixes a 22-byte default secret; PyJWT would warn about it on every request. The filter is
# added once (filter changes are global and not thread-safe to toggle per call) and names only this warning.
warnings.filterwarnings("ignore", category=InsecureKeyLengthWarning)


class TokenError(Exception):
    """The request carries no usable token; the gateway answers 401 and never calls the function."""


def default_secret() -> str:
    return os.environ.get("SKILLS_LOCAL_JWT_SECRET") or DEFAULT_SECRET


def issue_token(
    user: str,
    *,
    admin: bool = False,
    kind: str = "person",
    secret: str | None = None,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
    extra_claims: dict[str, Any] | None = None,
) -> str:
    """A token the local gateway accepts for `user`; `extra_claims` lets tests build odd tokens on purpose.

    `kind` "person" is shaped as the page's Cognito ID token (`token_use: id`, `auth_time`), "host" as an
    agent host's access token (`token_use: access`, `client_id` of the host client, scope `skillcore/host`).
    """
    if not user:
        raise ValueError("user must be a non-empty string")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    issued = int(time.time() if now is None else now)
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": user,
        "iat": issued,
        "nbf": issued,
        "exp": issued + int(ttl_seconds),
        "auth_time": issued,
    }
    if kind == "host":
        claims.update(token_use="access", client_id=HOST_CLIENT_ID, scope=HOST_SCOPE)
    else:
        claims.update(token_use="id")
    if admin:
        claims["cognito:groups"] = [ADMIN_GROUP]  # a JSON array in the token, as Cognito issues it
    claims.update(extra_claims or {})
    return jwt.encode(claims, secret or default_secret(), algorithm=ALGORITHM)


def bearer_token(authorization_header: str | None) -> str:
    if not authorization_header or not authorization_header.strip():
        raise TokenError("missing Authorization header")
    scheme, _, token = authorization_header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenError("Authorization header must be 'Bearer <token>'")
    return token.strip()


def verify(authorization_header: str | None, secret: str | None = None) -> dict[str, Any]:
    """The token's claims if the header holds a valid local token; TokenError (a 401) otherwise."""
    token = bearer_token(authorization_header)
    try:
        # Pinning the algorithm list is what refuses `alg: none` and any algorithm-confusion trick.
        claims: dict[str, Any] = jwt.decode(
            token,
            secret or default_secret(),
            algorithms=[ALGORITHM],
            audience=AUDIENCE,
            issuer=ISSUER,
            leeway=0,
            options={"require": ["exp", "sub"], "verify_iat": True, "verify_nbf": True},
        )
    except jwt.ExpiredSignatureError as error:
        raise TokenError("token has expired") from error
    except jwt.ImmatureSignatureError as error:
        raise TokenError("token is not valid yet") from error
    except jwt.InvalidAudienceError as error:
        raise TokenError("token has the wrong audience") from error
    except jwt.InvalidIssuerError as error:
        raise TokenError("token has the wrong issuer") from error
    except jwt.MissingRequiredClaimError as error:
        raise TokenError(f"token lacks the {error.claim!r} claim") from error
    except jwt.InvalidSignatureError as error:
        raise TokenError("token signature is not valid") from error
    except jwt.InvalidAlgorithmError as error:
        raise TokenError(f"token must be signed with {ALGORITHM}") from error
    except jwt.InvalidTokenError as error:
        raise TokenError(f"token is not valid: {error}") from error
    if not isinstance(claims.get("sub"), str) or not claims["sub"].strip():
        raise TokenError("token 'sub' must be a non-empty string")
    return claims


def render_claim(value: Any) -> str:
    """One claim value as the HTTP API JWT authorizer passes it to Lambda: always a string.

    Arrays become "[a b]" (brackets, space separated, no quotes): that is what deployed HTTP APIs hand to
    functions for Cognito's `cognito:groups`, so handlers must parse it and the local stack must not be kinder.
    Numbers keep their JSON spelling ("1767225600"), booleans are "true"/"false".
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + " ".join(render_claim(item) for item in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if value is None:
        return "null"
    return json.dumps(value)


def render_claims(claims: dict[str, Any]) -> dict[str, str]:
    return {name: render_claim(value) for name, value in claims.items()}
