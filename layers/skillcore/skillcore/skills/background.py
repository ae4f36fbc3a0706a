"""Background skills: the seed's BackgroundSkillDefinition and its registry rules.

`build_payload` turns what the server verified for a new job (`JobTarget`: the agent, its conversation,
the user's note) into the skill's payload; `execute` receives only `BackgroundPorts`, bound by the
worker to the job's owner, agent and conversation: a background skill cannot choose where it writes,
and cannot write anything but through them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec import Struct
from pydantic import BaseModel

from skillcore.skills.manifest import SkillKind, SkillManifest
from skillcore.skills.registry import Registry, RegistryError

MIN_ATTEMPTS, MAX_ATTEMPTS = 1, 10


class BackgroundPorts(Struct, frozen=True):
    # Writes the agent's message into the job's conversation, idempotently (message id = job id).
    write_agent_message: Callable[[str], None]


class JobTarget(Struct, frozen=True):
    """What the server verified for a new job: the caller's agent and its default conversation, and the
    user's note (free text, validated by the skill's payload model)."""

    agent_id: str
    agent_name: str
    conversation_id: str
    note: str
    language: str = "zh"  # the user's language ("zh" or "en"), for the message the job writes


class BackgroundSkillDefinition(Struct, frozen=True):
    manifest: SkillManifest
    payload_model: type[BaseModel]
    max_attempts: int
    execute: Callable[[Any, BackgroundPorts], None]
    # Raises pydantic's ValidationError when the target (the note) does not fit the payload.
    build_payload: Callable[[JobTarget], BaseModel]

    kind = SkillKind.BACKGROUND


class BackgroundRegistry(Registry[BackgroundSkillDefinition]):
    def __init__(self, definitions: Iterable[BackgroundSkillDefinition]):
        definitions = list(definitions)
        super().__init__(SkillKind.BACKGROUND, definitions)
        for definition in definitions:
            if not MIN_ATTEMPTS <= definition.max_attempts <= MAX_ATTEMPTS:
                raise RegistryError(f"{definition.manifest.key}: maxAttempts must be {MIN_ATTEMPTS}..{MAX_ATTEMPTS}")
