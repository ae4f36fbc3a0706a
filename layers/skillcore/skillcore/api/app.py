"""The router of the HTTP functions: API Gateway HTTP API (payload 2.0) events to route handlers.

A small router of our own rather than Powertools' event handler: importing that package loads every
resolver it has (AppSync's pulls in asyncio), about 60 ms of each cold start for nothing we use. This one
does what skillcore needs and no more: static routes before parameter routes, 404 versus 405 (with
Allow), path ids checked before any handler runs, and every error in the API envelope (api/errors.py).

Each route declares its contract: request body model, query model, response body, success status, the
errors it documents and whether it is an operator route. The router does the parsing a handler would
otherwise repeat (the caller from the token, the body, the query), calls the handler with typed values,
and encodes the typed value it returns. The OpenAPI generator (skillcore_local/openapi.py) reads the same
declarations, so what the document says is what the router does.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from functools import cache
from typing import Any, Literal, Protocol, get_origin

import msgspec
from msgspec import Struct
from pydantic import BaseModel

from skillcore.api import errors as documented
from skillcore.api import http
from skillcore.api.errors import JSON, Documented, Response, answer, documents, empty_response
from skillcore.db.errors import StoreUnavailable
from skillcore.errors import (
    DomainError,
    Forbidden,
    Internal,
    MethodNotAllowed,
    NotFound,
    PersonRequired,
    StoreUnavailableError,
)
from skillcore.limits.models import RateClass
from skillcore.observability import logger

# Every id skillcore mints or accepts fits this; anything else cannot name a resource (and a key longer
# than DynamoDB allows must never reach it), so it is simply not found.
PATH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_encoder = msgspec.json.Encoder()

MUTATIONS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


# A person's sign-in counts as recent for this long: a decision at L3 or above needs one (`auth_time`).
RECENT_SIGN_IN_SECONDS = 15 * 60

# What a route decides: nothing (None), something only a person decides ("person"), or something at L3 or
# above, which also needs a recent sign-in ("L3").
Decision = Literal["person", "L3"] | None


class ModelRef(Struct, frozen=True):
    """A request model named by its module and class, defined by the first request that needs it. Defining a
    pydantic class costs ~0.2 ms even with `defer_build`; RpcFunction's groups declare about forty, which was
    most of what kept its cold start above its target. The OpenAPI generator resolves every reference (and its
    drift test fails on a name that does not exist)."""

    module: str
    name: str

    def resolve(self) -> type[BaseModel]:
        return _resolve(self.module, self.name)


@cache
def _resolve(module: str, name: str) -> type[BaseModel]:
    model = getattr(importlib.import_module(module), name)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{module}.{name} is not a request model")
    return model


RequestModel = type[BaseModel] | ModelRef


def request_models(module: str) -> Callable[[str], ModelRef]:
    """`request = request_models("skillcore.api.requests.core")`, then `body=request("PutProfile")`."""
    return lambda name: ModelRef(module, name)


def _model(declared: RequestModel | None) -> type[BaseModel] | None:
    return declared.resolve() if isinstance(declared, ModelRef) else declared


class Caller(Struct, frozen=True):
    """Who calls, from the token the authorizer verified (never from the body): the user, whether an operator,
    whether a person (the page's sign-in) or an agent host (the MCP face), and when the person signed in."""

    user_id: str
    admin: bool
    kind: http.CallerKind = "person"
    auth_time: int | None = None

    @classmethod
    def of(cls, event: dict[str, Any]) -> Caller:
        return cls(http.user_id(event), "admin" in http.groups(event), http.caller_kind(event),
                   http.auth_time(event))

    @property
    def person(self) -> bool:
        return self.kind == "person"


def require_person(caller: Caller, *, recent: bool = False, now: float | None = None) -> None:
    """PersonRequired unless `caller` is a person (and, with `recent`, signed in within RECENT_SIGN_IN_SECONDS:
    a decision at L3 or above). A token without `auth_time` has no recent sign-in to show."""
    if not caller.person:
        raise PersonRequired("an agent host's token cannot decide this: the person decides on the page or in the "
                             "chat", reason="host_token")
    if recent:
        current = time.time() if now is None else now
        if caller.auth_time is None or current - caller.auth_time > RECENT_SIGN_IN_SECONDS:
            raise PersonRequired("this decision needs a sign-in within the last 15 minutes: sign in again",
                                 reason="stale_sign_in")


class Route(Struct, frozen=True, kw_only=True):
    method: str
    path: str  # the OpenAPI form: /rpc/agents/{agentId}
    pattern: re.Pattern[str]
    params: tuple[str, ...]
    handler: Callable[..., Any]
    operation_id: str
    summary: str
    response: Any  # a Struct type (or a generic alias such as Page[Agent]); None for a 204
    status: int
    body: RequestModel | None  # a class, or a ModelRef defined on first use (body_model())
    query: RequestModel | None
    errors: tuple[Documented, ...]
    auth: bool
    admin: bool
    headers: tuple[tuple[str, str], ...] = ()  # fixed headers of the success response (Cache-Control: no-store)
    store: bool = True  # whether the handler reaches the store (then it may answer 503 `store_unavailable`)
    decision: Decision = None  # a decision: only a person's token (L3: a recent sign-in too); else 403
    rate: RateClass | None = None  # the per-user rate class the limiter counts the route in (429 `rate_limited`)
    model: bool = False  # model-backed: admitted within the user's daily model budget (429 `budget_exhausted`)

    def body_model(self) -> type[BaseModel] | None:
        return _model(self.body)

    def query_model(self) -> type[BaseModel] | None:
        return _model(self.query)

    def documented_errors(self) -> tuple[Documented, ...]:
        """Every error this route can answer: those the router itself raises, then the route's own, then the
        router's answers to what no handler expects (500 `internal`, and 503 `store_unavailable` on a route
        that reaches the store)."""
        found: list[Documented] = []
        if self.body is not None:
            found.append(documented.BadRequest)
        if self.auth:
            found.append(documented.Unauthenticated)
        if self.admin:
            found.append(documented.Forbidden)
        if self.decision is not None:
            found.append(documented.PersonRequired)
        if self.params:
            found.append(documented.NotFound)
        if self.body is not None:
            found.append(documented.PayloadTooLarge)
        if self.body is not None or self.query is not None:
            found.append(documented.ValidationFailed)
        if self.rate is not None:
            found.append(documented.RateLimited)
        if self.model:
            found.append(documented.BudgetExhausted)
        found.extend(self.errors)
        found.append(documented.Internal)
        if self.store:
            found.append(documented.StoreUnavailableError)
        return tuple(dict.fromkeys(found))


def _compile(path: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    parts = re.split(r"<([A-Za-z_][A-Za-z0-9_]*)>", path)
    regex = "".join(f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part) for i, part in enumerate(parts))
    return re.compile(f"^{regex}/?$"), tuple(parts[1::2])


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


class Limiter(Protocol):
    """What the router asks before a route's handler runs (skillcore/limits/service.py): counts the request in
    its class and, for a model-backed route, admits it within the day's budget; 429 when spent."""

    def admit(self, user_id: str, rate_class: RateClass | None, *, model: bool = False) -> AbstractContextManager[None]: ...


class Routes:
    def __init__(self) -> None:
        self._routes: list[Route] = []
        # Set by the composition root (bootstrap.py); without one (a test's router) no limit is checked.
        self.limiter: Limiter | None = None
        self._elsewhere: list[tuple[str, re.Pattern[str]]] = []
        self._elsewhere_later: list[Callable[[], Iterable[tuple[str, str]]]] = []
        self._elsewhere_lock = threading.Lock()

    def served_elsewhere(self, method: str, path: str) -> None:
        """A method that API Gateway sends to another function on one of this router's paths: never handled
        here, but named in the Allow of this router's 405s, which would otherwise deny that it exists."""
        self._elsewhere.append((method.upper(), _compile(path)[0]))

    def served_elsewhere_from(self, routes: Callable[[], Iterable[tuple[str, str]]]) -> None:
        """The same for every (method, path) `routes()` names, paths in the OpenAPI form (`{agentId}`), asked
        on the first request that needs them: their declarations live in modules a cold start need not load."""
        self._elsewhere_later.append(routes)

    def _elsewhere_patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        with self._elsewhere_lock:
            while self._elsewhere_later:
                for method, path in self._elsewhere_later.pop(0)():
                    self.served_elsewhere(method, re.sub(r"\{([^}]+)\}", r"<\1>", path))
        return self._elsewhere

    def route(
        self,
        method: str,
        path: str,
        *,
        response: Any,
        status: int = 200,
        body: RequestModel | None = None,
        query: RequestModel | None = None,
        errors: tuple[Documented, ...] = (),
        auth: bool = True,
        admin: bool = False,
        headers: dict[str, str] | None = None,
        store: bool = True,
        decision: Decision = None,
        rate: RateClass | None = None,
        model: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers `handler(caller, **path_params[, body=...][, query=...]) -> response`.

        `caller` is a Caller (None on a route without auth). A 204 route returns None. A `decision` route
        refuses an agent host's token (and, for "L3", a person's sign-in older than 15 minutes) with 403
        `person_required` before the handler runs. `rate` is the per-user rate class the router's limiter counts
        the route in (an authenticated mutation without one counts as WRITES); `model` marks a model-backed route,
        admitted within the user's daily model budget.
        """
        pattern, params = _compile(path)
        if rate is None and auth and method.upper() in MUTATIONS:
            rate = RateClass.WRITES  # every mutation counts, in its own class or else among the writes
        if (status == 204) != (response is None):
            raise ValueError(f"{method} {path}: a 204 route has no response body, any other route has one")

        def register(handler: Callable[..., Any]) -> Callable[..., Any]:
            operation_id = _camel(handler.__name__)
            if any(r.operation_id == operation_id for r in self._routes):
                raise ValueError(f"operationId {operation_id!r} is taken: handlers need distinct names")
            doc = (handler.__doc__ or "").strip()
            self._routes.append(Route(
                method=method.upper(), path=re.sub(r"<([^>]+)>", r"{\1}", path), pattern=pattern, params=params,
                handler=handler, operation_id=operation_id, summary=doc.splitlines()[0] if doc else "",
                response=response, status=status, body=body, query=query, errors=errors, auth=auth, admin=admin,
                headers=tuple((headers or {}).items()), store=store, decision=decision, rate=rate, model=model,
            ))
            # Static routes win over parameter routes (PATCH /rpc/skills/permissions over /rpc/skills/<id>).
            self._routes.sort(key=lambda r: len(r.params))
            return handler

        return register

    @property
    def operations(self) -> tuple[Route, ...]:
        return tuple(self._routes)

    def resolve(self, event: dict[str, Any], _context: Any = None) -> Response:
        request = (event.get("requestContext") or {}).get("http") or {}
        method = str(request.get("method", "")).upper()
        path = event.get("rawPath") or request.get("path") or "/"
        route: Route | None = None
        try:
            route, params = self._match(method, path)
            if route is None:
                return params  # the 404 or 405 answer
            return self._call(route, params, event)
        except DomainError as error:
            if route is not None and not documents(route.documented_errors(), error):
                # The document would not describe this answer; say so where it can be seen and fixed.
                logger.warning("undocumented error", extra={"operation": route.operation_id, "status": error.status,
                                                             "code": error.code})
            return answer(error)
        except StoreUnavailable as error:
            # Its retries spent, or no time left for another attempt within the invocation (db/dynamo.py):
            # the client retries after Retry-After, with the same ids (every write is idempotent by them).
            logger.warning("store unavailable", extra={"operation": route.operation_id if route else None,
                                                       "store_code": error.code, "store_operation": error.operation})
            return answer(StoreUnavailableError())
        except Exception as error:  # noqa: BLE001 - the one place an unexpected error becomes a 500
            logger.exception("unhandled error", extra={"error_type": type(error).__name__})
            return answer(Internal())

    def _match(self, method: str, path: str) -> tuple[Route | None, Any]:
        allowed: list[str] = []
        resource: str | None = None
        for route in self._routes:
            found = route.pattern.match(path)
            if found is None:
                continue
            # The most specific path that matches is the resource (routes are sorted static first): a
            # parameter route that also matches (/rpc/skills/{skillId} for /rpc/skills/runs) is another one.
            resource = resource or route.path
            if route.path != resource:
                continue
            if route.method != method:
                allowed.append(route.method)
                continue
            params = found.groupdict()
            if any(not PATH_ID.match(value) for value in params.values()):
                raise NotFound("not found")
            return route, params
        # A path whose every method lives in another function (HostedFunction's /rpc/approvals) exists all the
        # same: another method on it is a 405, not a 404.
        elsewhere = [m for m, pattern in self._elsewhere_patterns() if pattern.match(path)]
        if allowed or elsewhere:
            methods = sorted({*allowed, *elsewhere})
            return None, answer(MethodNotAllowed(f"{method} is not allowed here", details={"allowed": methods}),
                                headers={"Allow": ", ".join(methods)})
        return None, answer(NotFound("no such route"))

    def _call(self, route: Route, params: dict[str, str], event: dict[str, Any]) -> Response:
        caller: Caller | None = None
        if route.auth:
            caller = Caller.of(event)
            if route.admin and not caller.admin:
                raise Forbidden("operator route: the admin group is required")
            if route.decision is not None:
                require_person(caller, recent=route.decision == "L3")
        args: dict[str, Any] = dict(params)
        if (body := route.body_model()) is not None:
            args["body"] = http.body(event, body)
        if (query := route.query_model()) is not None:
            args["query"] = http.parse(query, http.query(event))
        if self.limiter is not None and caller is not None and (route.rate is not None or route.model):
            with self.limiter.admit(caller.user_id, route.rate, model=route.model):
                result = route.handler(caller, **args)
        else:
            result = route.handler(caller, **args)
        if route.response is None:
            if result is not None:
                raise TypeError(f"{route.operation_id} answers 204 but returned a body")
            return empty_response(route.status)
        expected = get_origin(route.response) or route.response
        if not isinstance(result, expected):
            # Encoding another type would put on the wire what the document does not describe.
            raise TypeError(f"{route.operation_id} returned {type(result).__name__}, not {expected.__name__}")
        return {
            "statusCode": route.status,
            "headers": {"Content-Type": JSON, **dict(route.headers)},
            "body": _encoder.encode(result).decode("utf-8"),
            "isBase64Encoded": False,
        }


def new_app() -> Routes:
    return Routes()
