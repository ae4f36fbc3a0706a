"""The release check: what runs on every submitted version before an operator sees it, and its stored report.

1. `structure`: the package opened within the format's limits (a package that does not open is refused at
   submission with `package_invalid` and never stored, so a stored report always passed it);
2. `compatibility`: this server's version satisfies `compatibility.skillcore`;
3. `defences`: the four structural defences of user capabilities over the protocol (text filter, references,
   schema subset: capabilities/service.py `findings`), and the text filter over SKILL.md's description and
   body; the fourth, narrowing, is the renderer's: the evals read the protocol as it renders, narrowed;
4. `permissions`: no wider than declared: every permission the platform capabilities its steps use require,
   and `hosted_workflow:invoke` for remotes, is declared, at no lower risk level and the same approval mode;
   no declared permission is unknown to this server or at L4; one at L3 or above only from a trust level that
   SKILLS_HIGH_RISK_TRUST_LEVELS lets ask for it (`trust_level_forbidden`, packages/trust.py);
5. `evals`: every case of `evals/` on the offline model, the package's protocol (rendered by the server's
   template, every text quoted) among the system blocks; at least one case;
6. `code_tools`, for a package with code tools: each module against its manifest, and the tool's own eval
   cases run in the sandbox (packages/code_check.py).

Findings name paths and rules only: a package's text never reaches the report, the audit or the logs.
"""

from __future__ import annotations

from datetime import datetime

from skillcore import VERSION
from skillcore.capabilities import protocol as renderer
from skillcore.capabilities.defences import narrowing, text_filter
from skillcore.capabilities.models import CapabilityStatus, UserCapability
from skillcore.capabilities.service import binding_of, findings, workflow_of
from skillcore.model.offline import OfflineModel
from skillcore.model.port import BlockKind, ChatMessage, ModelRequest, SystemBlock
from skillcore.packages import semver, trust
from skillcore.packages.models import CheckReport, CheckResult, Finding
from skillcore.packages.package import Package
from skillcore.skills.manifest import RiskLevel, SkillManifest

MANIFEST = "skillcore.json"
HOSTED_PERMISSION = "hosted_workflow:invoke"
RISK_ORDER = {level.value: i for i, level in enumerate(RiskLevel)}


def capability_of(package: Package, *, user_id: str, now: datetime) -> UserCapability:
    """The package's protocol as the user capability it would be (never stored by the check)."""
    body = package.manifest.protocol
    return UserCapability(
        user_id=user_id, user_capability_id="release-check", name=body.name, display_name=body.display_name,
        when_to_use=tuple(body.when_to_use), status=CapabilityStatus.ACTIVE, version=1,
        workflow=workflow_of(body.workflow), platform_capability_ids=tuple(body.platform_capability_ids),
        tool_bindings=tuple(sorted((binding_of(b, now) for b in body.tool_bindings), key=lambda b: b.name)),
        created_at=now, updated_at=now,
    )


def _compatibility(package: Package) -> CheckResult:
    ok = semver.satisfies(VERSION, package.manifest.compatibility.skillcore)
    found = () if ok else (Finding(path=f"{MANIFEST}#/compatibility/skillcore", rule="incompatible"),)
    return CheckResult(check="compatibility", passed=ok, findings=found)


def _defences(package: Package, capability: UserCapability, registered: frozenset[str]) -> CheckResult:
    found: list[Finding] = []
    refused = findings(registered, display_name=capability.display_name, when_to_use=capability.when_to_use,
                       workflow=capability.workflow, platform_capability_ids=capability.platform_capability_ids,
                       bindings=capability.tool_bindings)
    if refused is not None:
        found += [Finding(path=f"{MANIFEST}#/protocol{e['path']}", rule=e.get("rule") or e.get("keyword") or refused.code)
                  for e in refused.errors]
    texts = [("/description", package.skill.description), ("/body", package.skill.body)]
    found += [Finding(path=f"SKILL.md#{e['path']}", rule=e.get("rule", "unsafe_text")) for e in text_filter.check(texts)]
    return CheckResult(check="defences", passed=not found, findings=tuple(found))


def _permissions(package: Package, manifests: dict[str, SkillManifest], trust_level: str | None,
                 high_risk_trust_levels: tuple[str, ...]) -> CheckResult:
    declared = {p.code: p for p in package.manifest.permissions}
    known = {p.code: p for m in manifests.values() for p in m.permissions}
    found: list[Finding] = []
    for i, p in enumerate(package.manifest.permissions):
        at = f"{MANIFEST}#/permissions/{i}"
        if p.risk_level is RiskLevel.L4:
            found.append(Finding(path=f"{at}/riskLevel", rule="risk_forbidden"))
        elif p.code not in known:
            found.append(Finding(path=f"{at}/code", rule="permission_unknown"))
        elif RISK_ORDER[p.risk_level.value] < RISK_ORDER[known[p.code].risk_level.value]:
            found.append(Finding(path=f"{at}/riskLevel", rule="risk_understated"))
        elif p.approval_mode is not known[p.code].approval_mode:
            found.append(Finding(path=f"{at}/approvalMode", rule="approval_mode_differs"))
        elif trust_level is not None and p.risk_level.value in trust.HIGH_RISK \
                and trust_level not in high_risk_trust_levels:
            found.append(Finding(path=f"{at}/riskLevel", rule="trust_level_forbidden"))
    body = package.manifest.protocol
    for i, step in enumerate(body.workflow.steps):
        manifest = manifests.get(getattr(step, "capability_id", "")) if step.kind == "platformCapability" else None
        for needed in manifest.permissions if manifest else ():
            if needed.code not in declared:
                found.append(Finding(path=f"{MANIFEST}#/protocol/workflow/steps/{i}/capabilityId",
                                     rule="permission_undeclared"))
    if package.manifest.remotes and HOSTED_PERMISSION not in declared:
        found.append(Finding(path=f"{MANIFEST}#/remotes", rule="permission_undeclared"))
    return CheckResult(check="permissions", passed=not found, findings=tuple(found))


def _evals(package: Package, capability: UserCapability) -> CheckResult:
    replies = tuple(c for c in package.evals if c.tool is None)
    if not replies:
        return CheckResult(check="evals", passed=False, findings=(Finding(path="evals/", rule="no_evals"),))
    text = renderer.render_user(capability, narrowing.narrow(capability, None), None)
    model = OfflineModel()
    failed: list[str] = []
    for case in replies:
        request = ModelRequest(system=(SystemBlock(kind=BlockKind.SKILL, text=text, source=package.manifest.skill_id),),
                               messages=(ChatMessage(role="user", text=case.input),))
        reply = model.converse(request).text
        if any(t not in reply for t in case.reply_contains) or any(t in reply for t in case.reply_not_contains):
            failed.append(f"{case.source}#{case.case_id}")
    found = tuple(Finding(path=f, rule="eval_failed") for f in failed)
    return CheckResult(check="evals", passed=not failed, findings=found, cases=len(replies),
                       failed_cases=tuple(failed))


def run(package: Package, *, manifests: dict[str, SkillManifest], now: datetime, trust_level: str | None = None,
        high_risk_trust_levels: tuple[str, ...] = trust.DEFAULT_HIGH_RISK) -> CheckReport:
    """The report of every check over an opened package (structure passed: it opened)."""
    capability = capability_of(package, user_id="release-check", now=now)
    registered = frozenset(manifests)
    results = (
        CheckResult(check="structure", passed=True),
        _compatibility(package),
        _defences(package, capability, registered),
        _permissions(package, manifests, trust_level, high_risk_trust_levels),
        _evals(package, capability),
    )
    if package.manifest.tools:
        from skillcore.packages import code_check

        tools = code_check.check(package)
        results = (*results, *((tools,) if tools else ()))
    return CheckReport(passed=all(r.passed for r in results), results=results, ran_at=now)
