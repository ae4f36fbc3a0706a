"""Routes: per-operation approvals (list, approve or deny). HostedFunction serves them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from msgspec import Struct

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes, request_models
from skillcore.api.views import Page
from skillcore.api.views import approvals as views
from skillcore.approvals import service, store
from skillcore.approvals.models import Approval
from skillcore.db.dynamo import Db
from skillcore.observability import logger
from skillcore.skills.manifest import SkillManifest

if TYPE_CHECKING:
    from skillcore.api.requests.approvals import ApprovalQuery, DecideApproval

# Defined by the first request that needs them: a cold start defines none of these classes.
request = request_models("skillcore.api.requests.approvals")


class ApprovalDeps(Struct, frozen=True):
    db: Db
    # The skill whose per-operation permission the approvals serve: its id and version go into the audit.
    skill: SkillManifest
    clock: Callable[[], datetime]
    # What follows a decision (HostedFunction: an approval asked in a chat runs its call and posts the result).
    after_decision: Callable[[str, Approval, datetime], object] | None = None


def register(routes: Routes, deps: ApprovalDeps) -> None:
    @routes.route("GET", "/rpc/approvals", query=request("ApprovalQuery"), response=Page[views.Approval])
    def list_approvals(caller: Caller, query: ApprovalQuery) -> Page[views.Approval]:
        """The caller's approvals, newest first; `status` filters (expired is derived from expiresAt)."""
        now = deps.clock()
        items, cursor = store.list_approvals(deps.db, caller.user_id, status=query.status, now=now,
                                             limit=query.limit, cursor=query.cursor)
        return Page(items=[views.approval(a, now) for a in items], next_cursor=cursor)

    @routes.route("POST", "/rpc/approvals/<approvalId>", body=request("DecideApproval"), response=views.Approval,
                  errors=(e.ApprovalNotPending, e.ConcurrentUpdate), decision="L3")
    def decide_approval(caller: Caller, approvalId: str, body: DecideApproval) -> views.Approval:  # noqa: N803
        """Approve or deny a pending approval (once; it expires 10 minutes after it was asked for)."""
        now = deps.clock()
        approval = service.decide(deps.db, caller.user_id, approvalId, body.decision, skill_id=deps.skill.skill_id,
                                  skill_version=deps.skill.version, now=now, caller_kind=caller.kind)
        if deps.after_decision is not None:
            try:
                deps.after_decision(caller.user_id, approval, deps.clock())
            except Exception as error:  # noqa: BLE001 - the decision stands; the follow-up is logged, not answered
                logger.warning("approval follow-up failed", extra={"error_type": type(error).__name__})
        return views.approval(approval, now)
