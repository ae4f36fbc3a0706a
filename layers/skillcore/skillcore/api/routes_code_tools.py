"""Routes: the caller's installed code tools, their limits and recent outcomes (the Skills page's code tools
section; docs/code-skills.md "Installed code tools"). Reads the releases' records and the caller's audit trail:
no package is opened and no module loaded here."""

from __future__ import annotations

from skillcore.api import errors as e
from skillcore.api.app import Caller, Routes
from skillcore.api.views import code_tools as views
from skillcore.code_tools import outcomes, service
from skillcore.code_tools.service import CodeToolDeps


def register(routes: Routes, deps: CodeToolDeps) -> None:
    @routes.route("GET", "/rpc/code-tools", response=views.CodeToolList, errors=(e.StoreUnavailableError,))
    def list_code_tools(caller: Caller) -> views.CodeToolList:
        """The code tools of the caller's installed skills (serving versions), each with its limits (fuel,
        memory, time, output, host calls), its host functions and its recent outcomes (codes, counts, times)."""
        releases = service.user_releases(deps, caller.user_id)
        keys = {(skill.skill_id, tool.name) for skill, release in releases for tool in release.tools}
        summaries = outcomes.recent(deps.db, caller.user_id, keys) if keys else {}
        return views.CodeToolList(items=[
            views.code_tool(skill.skill_id, release.version, tool, summaries[(skill.skill_id, tool.name)])
            for skill, release in releases for tool in release.tools])
