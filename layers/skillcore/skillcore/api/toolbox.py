"""The MCP face's tools (docs/contract.md "The MCP face"), without the MCP SDK: each tool is a thin shell over the same
service function as its HTTP route, declared the way a route is.

    @toolbox.tool("schedule_goal_check_in", arguments=ScheduleGoalCheckInArguments, errors=(...))
    def schedule_goal_check_in(caller: Caller, arguments: ScheduleGoalCheckInArguments) -> views.BackgroundJob:
        \"\"\"What the host's model reads to decide when to call it.\"\"\"
        return views.background_job(background.create_job(...))

The docstring is the tool's description, the arguments model its input schema. `call` answers a tool call
as a plain value: the body the tool returned (camelCase, as the route encodes it), or the API error envelope
with `is_error` set, with the same codes as HTTP (the router's api/errors.py mapping). Only McpFunction
(functions/mcp/) puts this behind the SDK, so no other function's cold start pays for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
from msgspec import Struct
from pydantic import BaseModel

from skillcore.api import errors as documented
from skillcore.api import http
from skillcore.api.app import Caller, Limiter
from skillcore.api.errors import Documented, documents, error_body
from skillcore.db.errors import StoreUnavailable
from skillcore.errors import DomainError, Internal, StoreUnavailableError, UnknownTool
from skillcore.limits.models import RateClass
from skillcore.observability import logger

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class Tool(Struct, frozen=True, kw_only=True):
    name: str
    description: str
    arguments: type[BaseModel]
    handler: Callable[[Caller, Any], Any]
    errors: tuple[Documented, ...]
    rate: RateClass | None = None  # as a route's: the per-user rate class of the tool's HTTP twin
    model: bool = False  # model-backed: admitted within the user's daily model budget

    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema(by_alias=True)

    def documented_errors(self) -> tuple[Documented, ...]:
        """Every error this tool can answer: argument validation, the tool's own, `internal` and
        `store_unavailable` (every tool reaches the store)."""
        limits = ((documented.RateLimited,) if self.rate is not None else ()) + (
            (documented.BudgetExhausted,) if self.model else ())
        return tuple(dict.fromkeys((documented.ValidationFailed, *limits, *self.errors, documented.Internal,
                                    documented.StoreUnavailableError)))


class DynamicTools(Protocol):
    """Tools that exist per user (an installed skill's code tools: api/tools_code.py): listed for the caller and
    called by name; `call` answers None for a name it does not have."""

    def listed(self, caller: Caller) -> list[ListedTool]: ...

    def call(self, caller: Caller, name: str, arguments: dict[str, Any]) -> Any | None: ...

    def documented_errors(self) -> tuple[Documented, ...]: ...


class ListedTool(Struct, frozen=True):
    name: str
    description: str
    input_schema: dict[str, Any]


class ToolAnswer(Struct, frozen=True):
    is_error: bool
    body: dict[str, Any]  # the tool's body, or {"error": {"code", "message", "details"}}


class Toolbox:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self.limiter: Limiter | None = None  # as the router's (bootstrap.py sets it)
        self.dynamic: DynamicTools | None = None  # per-user tools (api/tools_code.py sets it)

    def tool(
        self, name: str, *, arguments: type[BaseModel], errors: tuple[Documented, ...] = (),
        rate: RateClass | None = None, model: bool = False,
    ) -> Callable[[Callable[[Caller, Any], Any]], Callable[[Caller, Any], Any]]:
        """Registers `handler(caller, arguments) -> a response body Struct` as the tool `name`."""
        if not TOOL_NAME.match(name):
            raise ValueError(f"tool name {name!r} is not snake_case")
        if name in self._tools:
            raise ValueError(f"tool {name!r} is registered twice")

        def register(handler: Callable[[Caller, Any], Any]) -> Callable[[Caller, Any], Any]:
            description = " ".join((handler.__doc__ or "").split())
            if not description:
                raise ValueError(f"tool {name!r} needs a docstring: it is what the host's model reads")
            self._tools[name] = Tool(name=name, description=description, arguments=arguments, handler=handler,
                                     errors=errors, rate=rate, model=model)
            return handler

        return register

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(self._tools.values())

    def call(self, caller: Caller, name: str, arguments: dict[str, Any] | None) -> ToolAnswer:
        tool = self._tools.get(name)
        if tool is None:
            return self._call_dynamic(caller, name, arguments)
        try:
            parsed = http.parse(tool.arguments, arguments or {})
            if self.limiter is not None and (tool.rate is not None or tool.model):
                with self.limiter.admit(caller.user_id, tool.rate, model=tool.model):
                    result = tool.handler(caller, parsed)
            else:
                result = tool.handler(caller, parsed)
            body = msgspec.to_builtins(result)
            if not isinstance(body, dict):
                raise TypeError(f"tool {name} returned {type(result).__name__}, not a response body")
            return ToolAnswer(False, body)
        except DomainError as error:
            if not documents(tool.documented_errors(), error):
                logger.warning("undocumented error", extra={"tool": name, "code": error.code})
            return ToolAnswer(True, error_body(error))
        except StoreUnavailable as error:  # as the router answers it: 503 `store_unavailable`, retry later
            logger.warning("store unavailable", extra={"tool": name, "store_code": error.code,
                                                       "store_operation": error.operation})
            return ToolAnswer(True, error_body(StoreUnavailableError()))
        except Exception as error:  # noqa: BLE001 - the one place an unexpected tool error becomes `internal`
            logger.exception("unhandled tool error", extra={"tool": name, "error_type": type(error).__name__})
            return ToolAnswer(True, error_body(Internal()))

    def _call_dynamic(self, caller: Caller, name: str, arguments: dict[str, Any] | None) -> ToolAnswer:
        """A per-user tool, with the same answers as a declared one's (its errors, `internal`, the store's)."""
        unknown = ToolAnswer(True, error_body(UnknownTool(f"no tool named {name[:64]!r}", {})))
        if self.dynamic is None or not TOOL_NAME.match(name):
            return unknown
        try:
            result = self.dynamic.call(caller, name, arguments or {})
            if result is None:
                return unknown
            body = msgspec.to_builtins(result)
            if not isinstance(body, dict):
                raise TypeError(f"tool {name} returned {type(result).__name__}, not a response body")
            return ToolAnswer(False, body)
        except DomainError as error:
            if not documents(self.dynamic.documented_errors(), error):
                logger.warning("undocumented error", extra={"tool": name, "code": error.code})
            return ToolAnswer(True, error_body(error))
        except StoreUnavailable as error:
            logger.warning("store unavailable", extra={"tool": name, "store_code": error.code,
                                                       "store_operation": error.operation})
            return ToolAnswer(True, error_body(StoreUnavailableError()))
        except Exception as error:  # noqa: BLE001 - as for a declared tool
            logger.exception("unhandled tool error", extra={"tool": name, "error_type": type(error).__name__})
            return ToolAnswer(True, error_body(Internal()))
