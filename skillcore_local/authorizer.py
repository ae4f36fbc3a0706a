"""The JWT authorizer stand-in: a route that needs a token gets the verified claims (jwt_local), or the 401
API Gateway would answer, in the API's envelope with a Bearer challenge."""

from __future__ import annotations

from typing import Any

from skillcore_local.jwt_local import TokenError, verify
from skillcore_local.responses import HttpResponse, error_response
from skillcore_local.routing import Route


def authorize(
    route: Route, headers: list[tuple[str, str]], secret: str
) -> tuple[dict[str, Any] | None, HttpResponse | None]:
    """(claims, None) for a request the route lets through (no claims on a route without auth), else
    (None, the 401)."""
    claims: dict[str, Any] | None = None
    if route.auth:
        authorization = next((v for k, v in headers if k.lower() == "authorization"), None)
        try:
            claims = verify(authorization, secret)
        except TokenError as error:
            challenge = f'Bearer error="invalid_token" error_description="{error}"'
            return None, error_response(
                401, "unauthenticated", str(error), headers=[("www-authenticate", challenge)]
            )
    return claims, None
