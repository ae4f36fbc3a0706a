"""Finer scopes (skillcore/policy/scopes.py, scope_checks.py, gate.py): the matcher, property by property, the
gate's decision with narrowed grants, and the checks a narrowing passes before it is stored."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillcore.errors import AgentNotFound, GrantScopeMismatch, NotFound, PermissionRequired, ValidationFailed
from skillcore.policy import scope_checks, scopes
from skillcore.policy.audit import AuditMetadata
from skillcore.policy.gate import PolicyInput, Reason, decide, mismatch_metadata, refusal
from skillcore.policy.grants import GrantScope, GrantStatus, PermissionGrant, ScopeType
from skillcore.policy.scopes import (
    ArgumentConstraint,
    Mismatch,
    Narrowing,
    ResourceKind,
    ScopedCall,
    ScopeResource,
    miss,
)
from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel

T = datetime(2026, 12, 4, tzinfo=UTC)
READ = PermissionRequirement(code="memory:read", risk_level=RiskLevel.L1, approval_mode=ApprovalMode.PERSISTENT)


def agents(*ids: str) -> Narrowing:
    return Narrowing(resources=tuple(ScopeResource(kind=ResourceKind.AGENT, id=i) for i in ids))


def endpoint(eid: str, *tools: str, arguments: tuple[ArgumentConstraint, ...] = ()) -> Narrowing:
    return Narrowing(resources=(ScopeResource(kind=ResourceKind.HOSTED_ENDPOINT, id=eid, tools=tools),),
                     arguments=arguments)


def call(args: dict[str, Any] | None = None, *, endpoint_id: str | None = None, tool: str | None = "t",
         defaults: dict[str, Any] | None = None) -> ScopedCall:
    return ScopedCall(endpoint_id=endpoint_id, tool=tool, arguments=args, defaults=defaults or {})


# -- the matcher ---------------------------------------------------------------------------------------

def test_no_narrowing_covers_every_call() -> None:
    assert miss(None, None, None) is None
    assert miss(Narrowing(), "a1", call({"x": 1})) is None


def test_an_agent_narrowing_covers_its_agents_only() -> None:
    narrowing = agents("A", "B")
    assert miss(narrowing, "A", None) is None
    assert miss(narrowing, "B", call({})) is None
    assert miss(narrowing, "C", None) == scopes.Miss(Mismatch.AGENT)
    assert miss(narrowing, None, call({})) == scopes.Miss(Mismatch.AGENT)  # a call for no agent is outside


def test_an_endpoint_narrowing_covers_its_endpoint_and_tools() -> None:
    narrowing = endpoint("E", "search")
    assert miss(narrowing, None, call({}, endpoint_id="E", tool="search")) is None
    assert miss(narrowing, None, call({}, endpoint_id="E", tool="delete")) == scopes.Miss(Mismatch.TOOL)
    assert miss(narrowing, None, call({}, endpoint_id="F", tool="search")) == scopes.Miss(Mismatch.ENDPOINT)
    assert miss(endpoint("E"), None, call({}, endpoint_id="E", tool="anything")) is None  # no tools: every tool
    assert narrowing.covers_tool("E", "search") and not narrowing.covers_tool("E", "delete")
    assert not narrowing.covers_tool("F", "search") and agents("A").covers_tool("F", "x")


def test_argument_constraints_apply_to_their_tool_and_use_the_schema_default() -> None:
    limit = ArgumentConstraint(name="limit", tool="search", maximum=3)
    narrowing = endpoint("E", arguments=(limit,))
    assert miss(narrowing, None, call({"limit": 3}, endpoint_id="E", tool="search")) is None
    assert miss(narrowing, None, call({"limit": 4}, endpoint_id="E", tool="search")) == \
        scopes.Miss(Mismatch.ARGUMENT_MAXIMUM, "limit")
    assert miss(narrowing, None, call({"limit": 99}, endpoint_id="E", tool="other")) is None  # another tool
    assert miss(narrowing, None, call({}, endpoint_id="E", tool="search", defaults={"limit": 2})) is None
    assert miss(narrowing, None, call({}, endpoint_id="E", tool="search", defaults={"limit": 10})) == \
        scopes.Miss(Mismatch.ARGUMENT_MAXIMUM, "limit")
    assert miss(narrowing, None, call({}, endpoint_id="E", tool="search")) == \
        scopes.Miss(Mismatch.ARGUMENT_MISSING, "limit")
    # Not a tool call (an offer): only the resources count.
    assert miss(narrowing, None, call(None, endpoint_id="E", tool="search")) is None


@pytest.mark.parametrize(("value", "ok"), [(3, True), (3.0, True), (2.5, True), (3.01, False), (True, False),
                                           ("3", False), (None, False), ([1], False)])
def test_a_maximum_takes_numbers_only(value: object, ok: bool) -> None:
    narrowing = Narrowing(arguments=(ArgumentConstraint(name="n", maximum=3),))
    assert (miss(narrowing, None, call({"n": value})) is None) is ok


@pytest.mark.parametrize(("value", "ok"), [(1, True), (1.0, True), (True, False), ("1", False), ("on", True),
                                           (False, True), (0, False)])
def test_an_enum_compares_as_json_does(value: object, ok: bool) -> None:
    narrowing = Narrowing(arguments=(ArgumentConstraint(name="v", enum=(1, "on", False)),))
    assert (miss(narrowing, None, call({"v": value})) is None) is ok


def test_unreadable_narrowing_covers_nothing() -> None:
    broken = scopes.decode("{not json")
    assert broken.unreadable and bool(broken)
    assert miss(broken, "A", None) == scopes.Miss(Mismatch.UNREADABLE)
    assert scopes.decode('{"resources": [{"kind": "planet", "id": "x"}]}').unreadable


numbers = st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False))


@given(limit=numbers, value=numbers)
def test_property_maximum(limit: float, value: float) -> None:
    narrowing = Narrowing(arguments=(ArgumentConstraint(name="n", maximum=limit),))
    assert (miss(narrowing, None, call({"n": value})) is None) is (value <= limit)


@given(limit=st.integers(0, 50), value=st.one_of(st.text(max_size=60), st.lists(st.integers(), max_size=60)))
def test_property_max_length(limit: int, value: object) -> None:
    narrowing = Narrowing(arguments=(ArgumentConstraint(name="q", max_length=limit),))
    assert (miss(narrowing, None, call({"q": value})) is None) is (len(value) <= limit)  # type: ignore[arg-type]


scalars = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans())


@given(allowed=st.lists(scalars, min_size=1, max_size=6), value=scalars)
def test_property_enum(allowed: list[object], value: object) -> None:
    narrowing = Narrowing(arguments=(ArgumentConstraint(name="v", enum=tuple(allowed)),))
    member = any(type(value) is type(a) and value == a for a in allowed)
    assert (miss(narrowing, None, call({"v": value})) is None) is member


@given(allowed=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4, unique=True),
       caller=st.text(min_size=1, max_size=6))
def test_property_agents(allowed: list[str], caller: str) -> None:
    assert (miss(agents(*allowed), caller, None) is None) is (caller in allowed)


resources = st.lists(st.builds(ScopeResource, kind=st.sampled_from(ResourceKind), id=st.text(min_size=1, max_size=8),
                               tools=st.lists(st.text(max_size=5), max_size=3).map(tuple)), max_size=3)
constraints = st.lists(st.one_of(
    st.builds(ArgumentConstraint, name=st.text(min_size=1, max_size=5), maximum=st.integers(-9, 9)),
    st.builds(ArgumentConstraint, name=st.text(min_size=1, max_size=5), max_length=st.integers(0, 9)),
    st.builds(ArgumentConstraint, name=st.text(min_size=1, max_size=5), tool=st.text(min_size=1, max_size=5),
              enum=st.lists(scalars, min_size=1, max_size=3).map(tuple))), max_size=3)


@given(resources=resources, arguments=constraints)
def test_property_a_stored_narrowing_reads_back_the_same(resources: list, arguments: list) -> None:
    narrowing = Narrowing(resources=tuple(resources), arguments=tuple(arguments))
    assert scopes.decode(scopes.encode(narrowing)) == narrowing


@given(resources=resources, arguments=constraints, agent=st.text(max_size=4),
       args=st.dictionaries(st.text(min_size=1, max_size=5), scalars, max_size=4))
def test_property_narrowing_only_removes(resources: list, arguments: list, agent: str, args: dict) -> None:
    """Adding a constraint or a resource kind never lets through a call the narrower grant refused."""
    narrowing = Narrowing(resources=tuple(resources), arguments=tuple(arguments))
    wider = Narrowing(resources=tuple(resources), arguments=tuple(arguments[:-1]))
    scoped = call(args, endpoint_id="E", tool="t")
    if miss(wider, agent, scoped) is not None:
        assert miss(narrowing, agent, scoped) is not None


# -- the gate --------------------------------------------------------------------------------------------

def grant(scope: GrantScope | None = None, narrowing: Narrowing | None = None, gid: str = "g1") -> PermissionGrant:
    return PermissionGrant(grant_id=gid, user_id="u1", skill_id="memory-recall", skill_version="1.0.0",
                           permission_code="memory:read", scope=scope or GrantScope.user(), status=GrantStatus.ACTIVE,
                           granted_at=T, updated_at=T, narrowing=narrowing)


def ask(grants: tuple[PermissionGrant, ...], agent: str | None = "A", scoped: ScopedCall | None = None):
    return decide(PolicyInput(user_id="u1", skill_id="memory-recall", skill_version="1.0.0", requirements=(READ,),
                              action="tool.execute", agent_id=agent, target_id=agent, grants=grants, call=scoped))


def test_the_gate_denies_a_call_outside_the_narrowing_with_its_own_reason() -> None:
    narrowed = grant(narrowing=agents("A"))
    assert ask((narrowed,), "A").reason is Reason.ALLOWED
    denied = ask((narrowed,), "B")
    assert not denied.allowed and denied.reason is Reason.GRANT_SCOPE_MISMATCH
    assert denied.miss == scopes.Miss(Mismatch.AGENT) and denied.matched_grants == (narrowed,)
    error = refusal("memory-recall", denied, (READ,))
    assert isinstance(error, GrantScopeMismatch) and error.status == 403
    assert dict(error.details) == {"skillId": "memory-recall", "permissionCode": "memory:read", "grantId": "g1",
                                   "mismatch": "agent"}
    assert mismatch_metadata(denied) == {"scope_mismatch": "agent"}
    # a grant missing altogether is still permission_required
    assert isinstance(refusal("memory-recall", ask(()), (READ,)), PermissionRequired)


def test_any_grant_that_covers_the_call_allows_it() -> None:
    narrowed_agent = grant(GrantScope.agent("B"), Narrowing(arguments=(ArgumentConstraint(name="q", max_length=2),)))
    wide_user = grant(gid="g2")
    decision = ask((narrowed_agent, wide_user), "B", call({"q": "long"}))
    assert decision.allowed and decision.matched_grants == (wide_user,)
    assert ask((narrowed_agent,), "B", call({"q": "ok"})).matched_grants == (narrowed_agent,)
    assert ask((narrowed_agent,), "B", call({"q": "long"})).reason is Reason.GRANT_SCOPE_MISMATCH


def test_an_argument_miss_names_the_argument_for_the_audit_never_the_value() -> None:
    narrowed = grant(narrowing=Narrowing(arguments=(ArgumentConstraint(name="question", max_length=5),)))
    denied = ask((narrowed,), "A", call({"question": "tell me everything you know"}))
    assert denied.miss == scopes.Miss(Mismatch.ARGUMENT_MAX_LENGTH, "question")
    meta = AuditMetadata(**mismatch_metadata(denied))
    assert meta.scope_mismatch == "argument_max_length" and meta.scope_argument == "question"
    odd = ask((grant(narrowing=Narrowing(arguments=(ArgumentConstraint(name="a b", maximum=1),))),), "A",
              call({"a b": 2}))
    assert mismatch_metadata(odd)["scope_argument"] == "invalid_name"  # not a code: a placeholder


# -- the checks before a narrowing is stored ------------------------------------------------------------

RECALL_SCHEMA = {"type": "object", "properties": {"question": {"type": "string", "default": "", "maxLength": 500}}}
SEARCH_SCHEMA = {"type": "object", "properties": {
    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
    "mode": {"type": "string", "enum": ["fast", "deep"]},
    "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 5}, {"type": "null"}]},
}}


def subject(*, tool_schema: dict | None = RECALL_SCHEMA, proxied: bool = False, scope_type: ScopeType = ScopeType.USER,
            agents_known: tuple[str, ...] = ("A",), endpoints: dict[str, dict] | None = None) -> scope_checks.ScopeSubject:
    known = endpoints if endpoints is not None else {"E": {"search": SEARCH_SCHEMA, "delete": {"type": "object"}}}
    return scope_checks.ScopeSubject(scope_type=scope_type, tool_schema=tool_schema, proxied=proxied,
                                     agent_exists=lambda a: a in agents_known, endpoint_tools=known.get)


def paths(error: ValidationFailed) -> list[str]:
    return [e["path"] for e in error.details["errors"]]  # type: ignore[index]


def test_a_valid_narrowing_passes() -> None:
    scope_checks.check(Narrowing(resources=agents("A").resources,
                                 arguments=(ArgumentConstraint(name="question", max_length=20),)), subject())
    scope_checks.check(endpoint("E", "search", arguments=(
        ArgumentConstraint(name="limit", tool="search", maximum=10),
        ArgumentConstraint(name="mode", tool="search", enum=("fast",)),
        ArgumentConstraint(name="tags", tool="search", max_length=2))), subject(tool_schema=None, proxied=True))


def test_another_users_agent_or_endpoint_is_refused_as_missing() -> None:
    with pytest.raises(AgentNotFound):
        scope_checks.check(agents("A", "theirs"), subject())
    with pytest.raises(NotFound):
        scope_checks.check(endpoint("theirs"), subject(tool_schema=None, proxied=True))


@pytest.mark.parametrize(("narrowing", "kw", "where"), [
    (endpoint("E"), {}, "scope.resources[0].kind"),  # memory-recall calls no endpoint
    (agents("A"), {"scope_type": ScopeType.AGENT}, "scope.resources[0].kind"),  # an agent grant is one agent's
    (agents("A", "A"), {}, "scope.resources[1]"),
    (Narrowing(arguments=(ArgumentConstraint(name="nope", max_length=1),)), {}, "scope.arguments[0].name"),
    (Narrowing(arguments=(ArgumentConstraint(name="question", maximum=1),)), {}, "scope.arguments[0].maximum"),
    (Narrowing(arguments=(ArgumentConstraint(name="question", max_length=600),)), {}, "scope.arguments[0].maxLength"),
    (Narrowing(arguments=(ArgumentConstraint(name="question", max_length=1, maximum=2),)), {}, "scope.arguments[0]"),
    (Narrowing(arguments=(ArgumentConstraint(name="question", enum=(1,)),)), {}, "scope.arguments[0].enum[0]"),
    (Narrowing(arguments=(ArgumentConstraint(name="question", max_length=3),)), {"tool_schema": None},
     "scope.arguments[0]"),  # a skill without a tool has no input to constrain
    (endpoint("E", "gone"), {"tool_schema": None, "proxied": True}, "scope.resources[0].tools[0]"),
    (endpoint("E", arguments=(ArgumentConstraint(name="limit", tool="search", maximum=99),)),
     {"tool_schema": None, "proxied": True}, "scope.arguments[0].maximum"),  # above the schema's maximum
    (endpoint("E", arguments=(ArgumentConstraint(name="mode", tool="search", enum=("slow",)),)),
     {"tool_schema": None, "proxied": True}, "scope.arguments[0].enum[0]"),
    (endpoint("E", "delete", arguments=(ArgumentConstraint(name="limit", tool="search", maximum=3),)),
     {"tool_schema": None, "proxied": True}, "scope.arguments[0].tool"),  # a tool the grant does not cover
    (endpoint("E", arguments=(ArgumentConstraint(name="limit", maximum=3),)),
     {"tool_schema": None, "proxied": True}, "scope.arguments[0].tool"),
    (Narrowing(arguments=(ArgumentConstraint(name="limit", tool="search", maximum=3),)),
     {"tool_schema": None, "proxied": True}, "scope.arguments[0]"),  # no endpoint named
])
def test_a_narrowing_that_does_not_fit_is_refused_with_its_path(narrowing: Narrowing, kw: dict, where: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        scope_checks.check(narrowing, subject(**kw))
    assert where in paths(refused.value)


@given(value=st.one_of(st.integers(-100, 100), st.floats(-100, 100, allow_nan=False), st.booleans(), st.text(max_size=3)))
def test_property_fits_agrees_with_the_bounds(value: object) -> None:
    prop = SEARCH_SCHEMA["properties"]["limit"]
    expected = (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 50) or (
        isinstance(value, float) and value.is_integer() and 1 <= value <= 50)
    assert scope_checks.fits(prop, value) is expected
