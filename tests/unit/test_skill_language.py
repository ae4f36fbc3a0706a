"""What the server itself says follows the user's language: each built-in skill's Chinese name (the same the page
shows, web/lib/names.js), the grant notice of a Chinese turn, the goal check-in message, and which of the default
automation job's texts a client may show in its own language (`defaultTexts`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from msgspec.structs import replace

from skillcore.automation import service as automation
from skillcore.automation.models import AutomationConfig
from skillcore.conversations.models import Profile
from skillcore.executor.tool_branch import denied_notice
from skillcore.language import Language
from skillcore.skills.background import JobTarget
from skillcore.skills.builtin import SKILLS
from skillcore.skills.goal_check_in import build_payload, render_message
from skillcore.skills.memory_recall import MEMORY_RECALL

NAMES_JS = Path(__file__).resolve().parents[2] / "web" / "lib" / "names.js"
NOW = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)


def _page_names(table: str) -> dict[str, str]:
    text = NAMES_JS.read_text(encoding="utf-8")
    body = text[text.index(f"const {table} = {{"):]
    body = body[: body.index("};")]
    return {m[0]: m[1] for m in re.findall(r'"([a-z-]+)":\s*\[?"([^"]+)"', body)}


def test_every_built_in_skill_has_a_chinese_name_and_the_page_shows_the_same_names() -> None:
    manifests = {m.skill_id: m for m in SKILLS.manifests()}
    assert all(m.name_zh for m in manifests.values()), [m.skill_id for m in manifests.values() if not m.name_zh]
    assert _page_names("SKILLS_ZH") == {i: m.name_zh for i, m in manifests.items()}
    assert _page_names("SKILLS_EN") == {i: m.name for i, m in manifests.items()}
    assert MEMORY_RECALL.manifest.display_name("zh") == "记忆检索"
    assert MEMORY_RECALL.manifest.display_name("en") == "Memory recall"


def test_the_grant_notice_names_the_skill_in_the_turn_s_language() -> None:
    (zh,) = denied_notice(MEMORY_RECALL, Language.ZH).facts
    assert zh == "使用“记忆检索”（memory:read）之前需要你的授权。你可以在 Skills 页面开启。"
    (en,) = denied_notice(MEMORY_RECALL, Language.EN).facts
    assert "“Memory recall” (memory:read)" in en and not re.search(r"[\u4e00-\u9fff]", en)


def test_the_goal_check_in_message_is_written_in_the_job_s_language() -> None:
    target = JobTarget(agent_id="a1", agent_name="Mika", conversation_id="c1", note="running", language="en")
    english = render_message(build_payload(target))
    assert english == ("It is the time we agreed on to check in on your goal.\nWhat you noted then: “running”\n"
                       "How far along are you now?")
    chinese = render_message(build_payload(replace(target, note="跑步", language="zh")))
    assert chinese == "我们约定的目标复盘时间到了。\n你当时写下的关注点是：「跑步」\n现在进展到哪里了？"
    # A job stored before the language was kept reads as it always did (Chinese).
    stored = build_payload(JobTarget(agent_id="a1", agent_name="Mika", conversation_id="c1", note=""))
    assert stored.language == "zh" and render_message(stored).startswith("我们约定的目标复盘时间到了。")


def test_default_texts_name_the_default_job_s_texts_still_as_offered() -> None:
    profile = Profile(user_id="u1", timezone="Asia/Shanghai", display_name="", created_at=NOW, updated_at=NOW)
    job = automation.default_job(SKILLS, profile, NOW)
    assert automation.default_texts(SKILLS, job) == ("title", "prompt")
    renamed = replace(job, title="My tidy-up")
    assert automation.default_texts(SKILLS, renamed) == ("prompt",)
    rewritten = replace(job, config=AutomationConfig(prompt="keep it short", tools=job.config.tools))
    assert automation.default_texts(SKILLS, rewritten) == ("title",)
    # A job of the user's own with the same words is still the user's: only the default job has default texts.
    assert automation.default_texts(SKILLS, replace(job, is_default=False)) == ()
