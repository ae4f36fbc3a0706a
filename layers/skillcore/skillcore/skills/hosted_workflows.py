"""hosted-workflows@1.0.0: calls to the tools of a user's hosted external workflows (remote MCP endpoints).

The first L3 permission (an external write), and the first decided per operation: a persistent grant of
`hosted_workflow:invoke` **and**, for a tool that requires it, the owner's approval of exactly that call
(approvals/). Its runtime is the proxied call (hosted/calls.py), not the ToolRunner: the tools it calls are the
user's endpoints' snapshot tools, not a reviewed handler of ours, so it is registered as a `ProxiedToolSkill`
(builtin.py `proxied`), which lists it in the catalog and lets its permission be granted, and never as a
ToolSkillDefinition that a chat turn's selector would match or the ToolRunner would run.
"""

from msgspec import Struct

from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest

HOSTED_WORKFLOW_INVOKE = PermissionRequirement(
    code="hosted_workflow:invoke", risk_level=RiskLevel.L3, approval_mode=ApprovalMode.PER_OPERATION
)

HOSTED_WORKFLOWS = SkillManifest(
    skill_id="hosted-workflows",
    version="1.0.0",
    kind=SkillKind.TOOL,
    name="Hosted workflows",
    name_zh="托管工作流",
    description="Calls the tools of workflows you connected from another platform, each call checked and, "
                "where the tool requires it, approved by you first.",
    permissions=(HOSTED_WORKFLOW_INVOKE,),
)


class ProxiedToolSkill(Struct, frozen=True):
    """A tool skill whose tools are proxied to an endpoint the user connected (hosted/calls.py runs them)."""

    manifest: SkillManifest

    kind = SkillKind.TOOL


HOSTED_WORKFLOWS_SKILL = ProxiedToolSkill(HOSTED_WORKFLOWS)
