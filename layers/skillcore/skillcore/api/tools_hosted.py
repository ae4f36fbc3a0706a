"""The MCP face's `call_hosted_tool` (docs/contract.md "The MCP face"): `POST /rpc/hosted-endpoints/{endpointId}/calls` as a
tool, the same service function (hosted/calls.py) with the same checks, errors (as `isError` with the envelope)
and audit."""

from __future__ import annotations

from skillcore.api.app import Caller
from skillcore.api.requests.hosted import CallHostedToolArguments
from skillcore.api.routes_hosted import CALL_ERRORS, HostedRouteDeps
from skillcore.api.toolbox import Toolbox
from skillcore.api.views import hosted as views
from skillcore.hosted import calls
from skillcore.limits.models import RateClass


def register(toolbox: Toolbox, deps: HostedRouteDeps) -> None:
    @toolbox.tool("call_hosted_tool", arguments=CallHostedToolArguments, errors=CALL_ERRORS,
                  rate=RateClass.HOSTED_CALLS)
    def call_hosted_tool(caller: Caller, arguments: CallHostedToolArguments) -> views.HostedCall:
        """Call a tool of one of your hosted workflows (an endpoint you connected on the Skills page), with
        arguments valid for its input schema and a clientCallId of your own: the same clientCallId answers
        the same result and calls nothing again (with another tool or other arguments it answers
        idempotency_key_reused: use a new clientCallId for a new call). Needs the hosted_workflow:invoke grant; a tool that requires
        approval answers approval_required with an approvalId: the person approves it themselves, on the
        Skills page or by answering in the chat (you cannot approve it); once they have, call again with
        that approvalId."""
        return views.hosted_call(calls.call(
            deps.hosted, caller.user_id, arguments.endpoint_id, tool_name=arguments.tool_name,
            arguments=arguments.arguments, client_call_id=arguments.client_call_id,
            approval_id=arguments.approval_id, now=deps.clock()))
