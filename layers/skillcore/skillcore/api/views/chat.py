"""Bodies of the chat turn and of the run log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import UNSET, UnsetType

from skillcore.api.views import Body, Time, time
from skillcore.api.views.core import Message
from skillcore.conversations.models import RunKind, RunOutcome

if TYPE_CHECKING:
    from skillcore.conversations.models import SkillRun


class Run(Body, frozen=True, kw_only=True):
    run_id: str
    kind: RunKind
    skill_id: str | None
    skill_version: str | None
    outcome: RunOutcome
    duration_ms: int
    memories_used: int | UnsetType = UNSET


class RunRecord(Run, frozen=True, kw_only=True):
    """A run in the user's run log: where and when it happened."""

    conversation_id: str
    at: Time


class Turn(Body, frozen=True, kw_only=True):
    user_message: Message
    reply: Message
    run: Run


def _memories(r: SkillRun) -> int | UnsetType:
    return r.memories_used if r.memories_used is not None else UNSET


def run(r: SkillRun) -> Run:
    return Run(run_id=r.run_id, kind=r.kind, skill_id=r.skill_id, skill_version=r.skill_version, outcome=r.outcome,
               duration_ms=r.duration_ms, memories_used=_memories(r))


def run_record(r: SkillRun) -> RunRecord:
    return RunRecord(run_id=r.run_id, kind=r.kind, skill_id=r.skill_id, skill_version=r.skill_version,
                     outcome=r.outcome, duration_ms=r.duration_ms, memories_used=_memories(r),
                     conversation_id=r.conversation_id, at=time(r.at))
