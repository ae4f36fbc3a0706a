"""The composition root of every function: what each one serves (api/route_table.py) wired to the
collaborators it needs, each built once per cold start.

    app = bootstrap.rpc()        # RpcFunction's router, its groups registered with their collaborators
    app.routes.resolve(event, context)

A `Root` holds one function instance's collaborators (settings, the DynamoDB client, the skills registry,
HostedDeps, CapabilityDeps, DraftDeps, ...), one builder each, shared by every function that needs it: a
collaborator is built on first use, so a function builds only what its groups ask for, and every import here is
made inside its builder, so a function imports only what it serves. One Root per function instance: the local
stack runs every function in one process, each with its own clients (and its own IAM guard on its `db`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from skillcore.api import route_table

if TYPE_CHECKING:
    from skillcore.api.app import Routes
    from skillcore.api.routes_approvals import ApprovalDeps
    from skillcore.api.routes_capabilities import CapabilityRouteDeps
    from skillcore.api.routes_core import CoreDeps
    from skillcore.api.routes_hosted import HostedRouteDeps
    from skillcore.api.routes_installs import InstallRouteDeps
    from skillcore.api.routes_packages import PackageRouteDeps
    from skillcore.api.routes_skills import SkillDeps
    from skillcore.api.toolbox import Toolbox
    from skillcore.approvals.models import Approval
    from skillcore.capabilities.catalog import CatalogDeps
    from skillcore.capabilities.drafts import DraftDeps
    from skillcore.capabilities.service import CapabilityDeps
    from skillcore.chat.service import ChatDeps
    from skillcore.code_tools.installed import Installed
    from skillcore.code_tools.service import CodeToolDeps
    from skillcore.conversations.profile import ProfileDeps
    from skillcore.db.dynamo import Db
    from skillcore.executor.executor import Executor
    from skillcore.hosted.service import HostedDeps
    from skillcore.invocation import InvocationBudget
    from skillcore.limits.service import Limiter
    from skillcore.model.offline import ToolPlanner
    from skillcore.model.port import ChatModel
    from skillcore.packages.installs import InstallDeps
    from skillcore.packages.service import PackageDeps
    from skillcore.settings import Settings
    from skillcore.skills.registries import Skills
    from skillcore.work.drain import DueProbe
    from skillcore.work.scan import ShardWork
    from skillcore.work.sqs_queue import WorkQueue

# Which of Root's builders gives a route group (or a tool group) its collaborators.
GROUP_DEPS: dict[str, str] = {
    "skillcore.api.routes_core": "core_routes",
    "skillcore.api.routes_background": "skill_routes",
    "skillcore.api.routes_skills": "skill_routes",
    "skillcore.api.routes_automation": "skill_routes",
    "skillcore.api.routes_capabilities": "capability_routes",
    "skillcore.api.routes_packages": "package_routes",
    "skillcore.api.routes_installs": "install_routes",
    "skillcore.api.routes_chat": "chat_routes",
    "skillcore.api.routes_approvals": "approval_routes",
    "skillcore.api.routes_hosted": "hosted_routes",
    "skillcore.api.tools_core": "skill_routes",
    "skillcore.api.tools_capabilities": "capability_routes",
    "skillcore.api.tools_hosted": "hosted_routes",
    "skillcore.api.routes_code_tools": "code_tools",
    "skillcore.api.tools_code": "code_tools",
}


# The local stack's stand-in for IAM (skillcore_local/iam.py `port_guard`), set while it loads a function and taken
# by that function's Root: each AWS port the Root builds besides DynamoDB (the secrets key "kms", the work queue
# "sqs") is passed through it, so a call the function's role in template.yaml would not allow is refused locally as
# IAM refuses it in AWS. Unset in AWS, where IAM itself does this.
PortGuard = Callable[[str, Any], Any]
PORT_GUARD: ContextVar[PortGuard | None] = ContextVar("skillcore_port_guard", default=None)


def offline_planner(module: str) -> ToolPlanner:
    """The offline model's tool planner `module.plan`, imported on its first call: a function deployed with
    Bedrock never calls it, so its cold start does not import it."""

    def plan(request: Any) -> Any:
        return importlib.import_module(module).plan(request)

    return plan


class Root:
    """One function instance's collaborators, each built on first use and once."""

    def __init__(self) -> None:
        self._port_guard = PORT_GUARD.get()

    def _port(self, kind: str, port: Any) -> Any:
        return port if self._port_guard is None else self._port_guard(kind, port)

    # -- the basics
    @cached_property
    def settings(self) -> Settings:
        from skillcore.settings import Settings

        return Settings.from_env()

    @cached_property
    def db(self) -> Db:
        from skillcore.db.dynamo import make_db

        # A store attempt ends before the invocation does (db/dynamo.py StoreTimeouts): the budget says how long.
        return make_db(self.settings, time_left=self.budget.seconds_left)

    @property
    def clock(self) -> Callable[[], datetime]:
        from skillcore.clock import system_clock

        return system_clock

    @cached_property
    def skills(self) -> Skills:
        from skillcore.skills.builtin import SKILLS

        return SKILLS

    @cached_property
    def budget(self) -> InvocationBudget:
        """The invocation's remaining time (the handler begins it): a hosted call ends before the invocation."""
        from skillcore.invocation import InvocationBudget

        return InvocationBudget()

    @cached_property
    def work_queue(self) -> WorkQueue:
        from skillcore.work.sqs_queue import make_work_queue

        return self._port("sqs", make_work_queue(self.settings.work_queue_url, self.settings.region))

    @cached_property
    def limiter(self) -> Limiter:
        """The per-user limits (skillcore/limits/): the router and the MCP toolbox ask it before a limited route
        or tool; a model-backed operation reserves its model's max tokens of the day's budget."""
        from skillcore.capabilities.models import DRAFT_MAX_TOKENS
        from skillcore.limits.models import Limits, RateClass
        from skillcore.limits.service import Limiter

        settings = self.settings
        drafting = max(settings.bedrock_max_tokens, DRAFT_MAX_TOKENS)
        return Limiter(self.db, Limits.of(settings), clock=self.clock,
                       reserve=lambda c: drafting if c is RateClass.DRAFTING else settings.bedrock_max_tokens)

    # -- the models (each Metered: the usage it reports is charged to the user of the operation that calls it)
    @cached_property
    def chat_model(self) -> ChatModel:
        from skillcore.hosted.chat_words import plan_offline
        from skillcore.limits.service import Metered
        from skillcore.model.factory import make_model

        return Metered(make_model(self.settings, tool_planner=plan_offline))  # offline: a hosted tool only when `/hosted` names it

    @cached_property
    def automation_model(self) -> ChatModel:
        """Automation runs may think longer than a chat turn: a worker has minutes, not API Gateway's 29 s. Their
        model calls share a rate (settings.model_calls_per_minute) so a burst stays within the Bedrock quota."""
        from skillcore.automation.throttle import throttled
        from skillcore.limits.service import Metered
        from skillcore.model.factory import make_model

        planner = offline_planner("skillcore.automation.offline_extraction")
        return Metered(throttled(make_model(self.settings, read_timeout=60.0, tool_planner=planner), self.settings))

    # -- the features' collaborators
    @cached_property
    def hosted(self) -> HostedDeps:
        """The hosted endpoint calls: the egress settings, the secrets key and the hosted workflows skill."""
        import os

        from skillcore.egress.settings import EgressSettings
        from skillcore.hosted import secrets
        from skillcore.hosted.service import HostedDeps
        from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

        keys = self._port("kms", secrets.keys_from_env(os.environ, local=self.settings.local, region=self.settings.region))
        return HostedDeps(db=self.db, keys=keys, egress=EgressSettings.from_env(), skill=HOSTED_WORKFLOWS,
                          time_left=self.budget.seconds_left)

    @cached_property
    def profile(self) -> ProfileDeps:
        """The first PUT /rpc/me also creates the user's default daily memory job."""
        from skillcore.automation.service import default_job_op
        from skillcore.conversations.profile import ProfileDeps

        return ProfileDeps(db=self.db, created_with=default_job_op(self.db, self.skills))

    @cached_property
    def capabilities(self) -> CapabilityDeps:
        from skillcore.capabilities.service import CapabilityDeps

        return CapabilityDeps(db=self.db, registered=frozenset(m.skill_id for m in self.skills.manifests()))

    @cached_property
    def catalog(self) -> CatalogDeps:
        from skillcore.capabilities.catalog import CatalogDeps

        percent = self.settings.canary_percent

        def installed(user_id: str) -> Any:
            from skillcore.packages import serve  # the installs' code loads with the first listing

            return serve.offers(self.packages, percent)(user_id)

        def installed_protocol(user_id: str, skill_id: str, host_profile: str | None) -> Any:
            from skillcore.packages import serve

            return serve.protocols(self.packages, percent, self.clock)(user_id, skill_id, host_profile)

        return CatalogDeps(db=self.db, skills=self.skills, installed=installed, installed_protocol=installed_protocol)

    @cached_property
    def drafts(self) -> DraftDeps:
        """The draft generator's model (offline: the deterministic drafter) is built on the first draft request.
        A proposal of 20 steps is a few thousand tokens of tool input, more than a chat reply's budget."""
        from skillcore.capabilities.drafts import DraftDeps
        from skillcore.capabilities.models import DRAFT_MAX_TOKENS, DRAFT_READ_TIMEOUT_S
        from skillcore.limits.service import Metered
        from skillcore.model.factory import make_model

        settings = self.settings
        model = functools.cache(lambda: Metered(make_model(
            settings, read_timeout=DRAFT_READ_TIMEOUT_S,
            tool_planner=offline_planner("skillcore.capabilities.offline_drafter"))))
        return DraftDeps(capabilities=self.capabilities, model=model,
                         max_tokens=max(settings.bedrock_max_tokens, DRAFT_MAX_TOKENS),
                         max_open_drafts=settings.max_open_drafts)

    def executor_for(self, now: datetime) -> Executor:
        """A chat turn's executor. Its hosted branch builds the hosted calls on the first turn that needs them
        (the egress settings, the secrets key, the MCP client): a chat cold start loads none of them."""
        from skillcore.executor.assembly import build_executor

        return build_executor(self.skills, self.chat_model, self.db, now=now, clock=self.clock,
                              max_tokens=self.settings.bedrock_max_tokens, hosted_branch=self.hosted_branch,
                              code_branch=self.code_branch)

    @cached_property
    def code_branch(self) -> Any:
        """The installed code tools in the chat (code_tools/chat.py): `/<tool> {json}`."""
        from skillcore.code_tools.chat import CodeToolBranch

        return CodeToolBranch(self.code_tools)

    @cached_property
    def installed(self) -> Installed:
        """A user's installed skills with their serving versions (the install flow's list)."""
        from skillcore.code_tools.installed import InstalledSkill
        from skillcore.packages import installs

        db = self.db
        canary = self.settings.canary_percent  # the rollout's share (packages/upgrades.py)

        def installed(user_id: str) -> list[InstalledSkill]:
            return [InstalledSkill(skill_id=i.skill_id, version=i.version, release_id=i.release_id)
                    for i in installs.all_installed(db, user_id, canary_percent=canary)]

        return installed

    @cached_property
    def code_tools(self) -> CodeToolDeps:
        """Installed code tools: the installs, the catalog's releases and package store, the hosted calls (built
        only when a tool's skill declares hosted_workflow:invoke)."""
        from skillcore.code_tools.service import CodeToolDeps

        return CodeToolDeps(db=self.db, packages=lambda: self.packages, installed=self.installed,
                            hosted=lambda: self.hosted)

    @cached_property
    def hosted_branch(self) -> Any:
        from skillcore.hosted.chat import HostedChatBranch

        return HostedChatBranch(self.db, lambda: self.hosted)

    @cached_property
    def packages(self) -> PackageDeps:
        """The catalog: its table, the package bytes' store (S3 in AWS, a directory locally: built by the first
        request that stores or reads a package) and the built-in manifests the release check reads."""
        from skillcore.packages.service import PackageDeps

        settings = self.settings

        @functools.cache
        def blobs() -> Any:
            if settings.package_bucket:
                from skillcore.packages.s3_blobs import S3Blobs

                return S3Blobs(settings.package_bucket, settings.region)
            if settings.local_package_dir:
                from skillcore.packages.blobs import DirectoryBlobs

                return DirectoryBlobs(settings.local_package_dir)
            raise RuntimeError("no package store: set SKILLS_PACKAGE_BUCKET (or SKILLS_LOCAL_PACKAGE_DIR locally)")

        return PackageDeps(db=self.db, blobs=blobs, manifests={m.skill_id: m for m in self.skills.manifests()},
                           high_risk_trust_levels=settings.high_risk_trust_levels, rollout=self.rollout_settings)

    @cached_property
    def rollout_settings(self) -> Any:
        from skillcore.packages.rollout import RolloutSettings

        s = self.settings
        return RolloutSettings(canary_percent=s.canary_percent, window_minutes=s.rollout_window_minutes,
                               min_calls=s.rollout_min_calls, threshold_percent=s.rollback_threshold_percent)

    @cached_property
    def installs(self) -> InstallDeps:
        """A user's installs of catalog skills (packages/installs.py): the catalog table and the settings."""
        from skillcore.packages.installs import InstallDeps

        def tool_names(release_id: str) -> tuple[str, ...]:
            from skillcore.packages import serve  # only when someone uninstalls

            return serve.tool_names(self.packages, release_id)

        return InstallDeps(db=self.db, canary_percent=self.settings.canary_percent,
                           high_risk_trust_levels=self.settings.high_risk_trust_levels, tool_names=tool_names)

    # -- the route groups' collaborators (GROUP_DEPS)
    @cached_property
    def core_routes(self) -> CoreDeps:
        from skillcore.api.routes_core import CoreDeps

        return CoreDeps(db=self.db, clock=self.clock, profile=self.profile, limiter=self.limiter,
                        max_open_drafts=self.settings.max_open_drafts)

    @cached_property
    def skill_routes(self) -> SkillDeps:
        from skillcore.api.routes_skills import SkillDeps

        db = self.db

        def endpoint_tools(user_id: str, endpoint_id: str) -> Any:
            from skillcore.hosted import endpoint_store  # only when a grant names an endpoint

            return endpoint_store.tool_schemas(db, user_id, endpoint_id)

        percent = self.settings.canary_percent

        def installed(user_id: str) -> Any:
            from skillcore.packages.installs import all_installed, skill_manifest  # with the first listing
            from skillcore.policy.skills import Installed

            return [Installed(skill_manifest(i), i.trust_level.value)
                    for i in all_installed(db, user_id, canary_percent=percent)]

        return SkillDeps(db=db, skills=self.skills, clock=self.clock, endpoint_tools=endpoint_tools,
                         installed=installed)

    @cached_property
    def capability_routes(self) -> CapabilityRouteDeps:
        from skillcore.api.routes_capabilities import CapabilityRouteDeps

        return CapabilityRouteDeps(capabilities=self.capabilities, catalog=self.catalog, clock=self.clock,
                                   drafts=self.drafts)

    @cached_property
    def package_routes(self) -> PackageRouteDeps:
        from skillcore.api.routes_packages import PackageRouteDeps

        return PackageRouteDeps(packages=self.packages, capabilities=self.capabilities, clock=self.clock)

    @cached_property
    def install_routes(self) -> InstallRouteDeps:
        from skillcore.api.routes_installs import InstallRouteDeps

        return InstallRouteDeps(installs=self.installs, clock=self.clock)

    @cached_property
    def chat_routes(self) -> ChatDeps:
        from skillcore.chat.service import ChatDeps

        return ChatDeps(db=self.db, executor_for=self.executor_for, clock=self.clock,
                        history_messages=self.settings.history_messages)

    @cached_property
    def approval_routes(self) -> ApprovalDeps:
        from skillcore.api.routes_approvals import ApprovalDeps
        from skillcore.skills.hosted_workflows import HOSTED_WORKFLOWS

        hosted = self.hosted
        db = self.db

        def after_decision(user_id: str, approval: Approval, now: datetime) -> object:
            """An approval asked in a chat: the approved call runs here and its result is posted to the
            conversation (hosted/chat.py, imported by the first decision)."""
            from skillcore.approvals.models import ApprovalStatus
            from skillcore.hosted.chat_delivery import deliver_after_decision

            return deliver_after_decision(db, hosted, user_id, approval.approval_id,
                                          approved=approval.status is ApprovalStatus.APPROVED, now=now)

        return ApprovalDeps(db=db, skill=HOSTED_WORKFLOWS, clock=self.clock, after_decision=after_decision)

    @cached_property
    def hosted_routes(self) -> HostedRouteDeps:
        from skillcore.api.routes_hosted import HostedRouteDeps

        return HostedRouteDeps(hosted=self.hosted, clock=self.clock)

    def deps_of(self, group: str) -> Any:
        """The group's collaborators, built by the first request that reads them: a cold start builds none,
        and an instance that only ever answers GET /rpc/agents never builds the skills registry."""
        from skillcore import lazy

        return lazy.value(lambda: getattr(self, GROUP_DEPS[group]))


# ---------------------------------------------------------------------------------------------- the functions


class HttpFunction(NamedTuple):
    root: Root
    routes: Routes


class McpFunction(NamedTuple):
    root: Root
    toolbox: Toolbox


class ScanFunction(NamedTuple):
    root: Root
    probes: tuple[DueProbe, ...]
    # The running canaries of installed skills, evaluated once a scan (packages/rollout.py): now -> counts.
    rollouts: Callable[[datetime], dict[str, Any]] | None = None


class WorkerFunction(NamedTuple):
    root: Root
    work: ShardWork


def http_function(logical_id: str) -> HttpFunction:
    """The function's router with exactly its route groups (route_table.FUNCTIONS). A function behind a greedy
    route also names the other functions' routes in its 405s' Allow; they are read on the first 404 or 405."""
    from skillcore.api.app import new_app

    root = Root()
    routes = new_app()
    served = route_table.FUNCTIONS[logical_id]
    route_table.register(routes, served.routes, root.deps_of)
    routes.limiter = root.limiter  # built here, used by the first limited route (no request at cold start)
    if any(route.endswith("+}") for route in served.gateway):
        routes.served_elsewhere_from(lambda: route_table.served_elsewhere(logical_id))
    return HttpFunction(root, routes)


def rpc() -> HttpFunction:
    return http_function("RpcFunction")


def catalog() -> HttpFunction:
    """CatalogFunction: packages, publishers, releases, installs and the code tools' listing."""
    return http_function("CatalogFunction")


def chat_turn() -> HttpFunction:
    """ChatTurnFunction. What every turn uses is built at init, not by the first turn: the route's request model
    and collaborators, the built-in skills, the model and its client, the hosted branch and the executor's
    assembly."""
    function = http_function("ChatTurnFunction")
    for route in function.routes.operations:
        route.body_model()
    function.root.chat_routes  # noqa: B018
    function.root.skills  # noqa: B018
    function.root.chat_model  # noqa: B018
    function.root.hosted_branch  # noqa: B018
    importlib.import_module("skillcore.executor.assembly")
    return function


def hosted() -> HttpFunction:
    """HostedFunction. Both its groups (the approvals, the endpoints) work through the hosted calls' collaborators
    and their KMS client: built at init, not by the first request."""
    function = http_function("HostedFunction")
    function.root.hosted  # noqa: B018
    return function


def mcp() -> McpFunction:
    """McpFunction's tools, wired as the HTTP functions wire the same groups (the MCP server around them is
    functions/mcp/mcp_face.py's, outside the layer)."""
    from skillcore.api.toolbox import Toolbox

    root = Root()
    toolbox = Toolbox()
    route_table.register(toolbox, route_table.FUNCTIONS["McpFunction"].tools, root.deps_of)
    toolbox.limiter = root.limiter
    return McpFunction(root, toolbox)


def scan() -> ScanFunction:
    """ScanFunction: the DynamoDB client, the work queue it dispatches to, and the stores' probes of due work
    (background jobs first: their time was promised to the minute). It imports the stores, never the workers."""
    import functools

    from skillcore.automation import store as automation_store
    from skillcore.background import job_store
    from skillcore.work.drain import Probe

    root = Root()
    db = root.db
    root.work_queue  # noqa: B018 - the clients are made at init

    def rollouts(now: datetime) -> dict[str, Any]:
        from skillcore.packages.rollout import (
            evaluate,  # the first scan loads it: the cold start only dispatches
        )

        return evaluate(db, root.rollout_settings, now)

    return ScanFunction(root, (Probe("background", functools.partial(job_store.probe, db)),
                               Probe("automation", functools.partial(automation_store.probe, db))),
                        rollouts=rollouts)


def worker() -> WorkerFunction:
    """WorkerFunction: a shard's items run settings.worker_concurrency at once (skillcore/work/fanout.py), each
    behind its own claim."""
    from skillcore.automation.runner import AutomationRunner
    from skillcore.background.worker import Worker
    from skillcore.work.scan import ShardWork

    root = Root()
    settings, db = root.settings, root.db
    work = ShardWork(
        (Worker(db, root.skills.background, batch_size=settings.scan_batch_size, concurrency=settings.worker_concurrency),
         AutomationRunner(db, root.skills, root.automation_model, batch_size=settings.scan_batch_size,
                          concurrency=settings.worker_concurrency, limiter=root.limiter)),
        root.work_queue,
        max_age_seconds=settings.work_max_age_seconds,
    )
    return WorkerFunction(root, work)
