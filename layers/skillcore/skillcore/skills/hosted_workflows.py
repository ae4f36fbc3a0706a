"""hosted-workflows@1.0.0: calls to the tools of a user's hosted external workflows (remote MCP endpoints).

The first L3 permission (an external write), and the first decided per operation: a persistent grant of
`hosted_workflow:invoke` **and**, for a tool that requires it, the owner's approval of exactly that call
(approvals/). The manifest is defined here for the approvals and the calls that audit under it; the skill's
runtime (the proxied call) registers it with the registries.
"""

from skillcore.skills.manifest import ApprovalMode, PermissionRequirement, RiskLevel, SkillKind, SkillManifest

HOSTED_WORKFLOW_INVOKE = PermissionRequirement(
    code="hosted_workflow:invoke", risk_level=RiskLevel.L3, approval_mode=ApprovalMode.PER_OPERATION
)

HOSTED_WORKFLOWS = SkillManifest(
    skill_id="hosted-workflows",
    version="1.0.0",
    kind=SkillKind.TOOL,
    name="Hosted workflows",
    description="Calls the tools of workflows you connected from another platform, each call checked and, "
                "where the tool requires it, approved by you first.",
    permissions=(HOSTED_WORKFLOW_INVOKE,),
)
