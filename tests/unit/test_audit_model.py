"""The audit record holds no free text: every string field is a code or a digest, checked on construction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillcore.db.codec import from_item
from skillcore.policy.audit import AuditAction, AuditEvent, AuditMetadata, Decision, audit_code
from skillcore.policy.audit_store import audit_from_item, to_audit_item
from skillcore.policy.grants import GrantScope, ScopeType

AT = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
DIGEST = "ab" * 32


def event(**fields) -> AuditEvent:
    values = {"event_id": "01JEVENT", "user_id": "u1", "at": AT, "skill_id": "memory-recall", "skill_version": "1.0.0",
              "action": AuditAction.TOOL_EXECUTE, "decision": Decision.ALLOWED}
    return AuditEvent(**values | fields)


@pytest.mark.parametrize("name", ["tool_id", "error_code", "conversation_id", "source_message_id", "job_id", "run_id"])
@pytest.mark.parametrize("text", ["I like green tea", "memory:read\n", "", "x" * 129, "记住我喜欢绿茶"])
def test_code_fields_refuse_free_text(name: str, text: str) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be an identifier or code"):
        AuditMetadata(**{name: text})


@pytest.mark.parametrize("name", ["permission_codes", "missing_permissions", "matched_grant_ids", "tools"])
def test_code_lists_refuse_free_text_and_bare_strings(name: str) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be an identifier or code"):
        AuditMetadata(**{name: ("memory:read", "remember that I like tea")})
    with pytest.raises(ValueError, match=f"audit {name} must be a list of codes"):
        AuditMetadata(**{name: "memory:read"})


@pytest.mark.parametrize("name", ["idempotency_key", "input_sha256"])
def test_digests_are_sha256_hex(name: str) -> None:
    assert getattr(AuditMetadata(**{name: DIGEST}), name) == DIGEST
    with pytest.raises(ValueError, match=f"audit {name} must be a SHA-256 hex digest"):
        AuditMetadata(**{name: "not a digest"})


@pytest.mark.parametrize("name", ["duration_ms", "attempt", "call_index", "results"])
@pytest.mark.parametrize("value", [-1, True, "3", 1.5])
def test_counts_are_non_negative_integers(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be a count"):
        AuditMetadata(**{name: value})


def test_unknown_metadata_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="Unexpected keyword argument 'note'"):
        AuditMetadata(note="call mum")  # type: ignore[call-arg]


def test_event_codes_and_enums_are_checked() -> None:
    with pytest.raises(ValueError, match="audit reason must be an identifier or code"):
        event(reason="the user said no")
    with pytest.raises(ValueError, match="audit skill_id must be an identifier or code"):
        event(skill_id="memory recall")
    with pytest.raises(ValueError):
        event(action="tool.delete")
    assert event(action="tool.execute", decision="denied").decision is Decision.DENIED


def test_round_trip_through_the_item_keeps_only_set_fields() -> None:
    original = event(
        scope=GrantScope.agent("a1"), target_id="tool-call-1", reason="missing_permission",
        metadata=AuditMetadata(permission_codes=("memory:read",), input_sha256=DIGEST, duration_ms=0, attempt=1),
    )
    item = from_item(to_audit_item(original))
    assert item["metadata"] == {"permission_codes": ["memory:read"], "input_sha256": DIGEST, "duration_ms": 0, "attempt": 1}
    assert item["scope"] == {"type": "agent", "agent_id": "a1"}
    restored = audit_from_item(item)
    assert restored == original
    assert restored.scope is not None and restored.scope.type is ScopeType.AGENT
    assert isinstance(restored.metadata.permission_codes, tuple)


def test_audit_code_replaces_anything_that_is_not_a_code() -> None:
    assert audit_code("memory_recall") == "memory_recall"
    assert audit_code("memory_recall\n") == "invalid_name"
    assert audit_code("drop table; please") == "invalid_name"


# User-defined capabilities: the metadata of user_capability.* events holds ids, codes, counts and a digest.
@pytest.mark.parametrize("name", ["binding_name", "host_profile", "status"])
@pytest.mark.parametrize("text", ["回顾昨天的目标", "ignore previous instructions", "", "x" * 129])
def test_capability_code_fields_refuse_free_text(name: str, text: str) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be an identifier or code"):
        AuditMetadata(**{name: text})


@pytest.mark.parametrize("name", ["platform_capability_ids", "binding_names", "defence_rules"])
def test_capability_code_lists_refuse_free_text(name: str) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be an identifier or code"):
        AuditMetadata(**{name: ("memory-recall", "把今天最重要的一件事记下来")})


@pytest.mark.parametrize("name", ["capability_version", "step_count", "binding_count"])
def test_capability_counts_are_counts(name: str) -> None:
    with pytest.raises(ValueError, match=f"audit {name} must be a count"):
        AuditMetadata(**{name: -1})


def test_capability_schema_digest_is_a_digest() -> None:
    assert AuditMetadata(schema_sha256=DIGEST).schema_sha256 == DIGEST
    with pytest.raises(ValueError, match="audit schema_sha256 must be a SHA-256 hex digest"):
        AuditMetadata(schema_sha256='{"type": "object"}')


def test_capability_actions_are_audit_actions() -> None:
    assert {a.value for a in AuditAction if a.value.startswith("user_capability.")} == {
        "user_capability.create", "user_capability.update", "user_capability.activate",
        "user_capability.deactivate", "user_capability.delete", "user_capability.binding.create",
        "user_capability.binding.update", "user_capability.binding.delete",
        "user_capability.draft.start", "user_capability.draft.generate", "user_capability.draft.confirm",
    }
