"""The user's language: how it is known (skillcore/language.py) and every message the agent writes that
follows it (offline replies, the grant notice, recall answers, degraded replies, workflow prompts,
automation summaries)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillcore.conversations.models import Role
from skillcore.executor.executor import DEGRADED_REPLY
from skillcore.executor.tool_branch import denied_notice
from skillcore.language import DEFAULT, Language, choose, detect
from skillcore.model.offline import OfflineModel
from skillcore.model.port import BlockKind, ChatMessage, ModelError, ModelRequest, SystemBlock, ToolSpec
from skillcore.skills.memory_recall import MEMORY_RECALL
from tests.unit.test_executor import FakeModel, History, context, executor, history_message

HAN = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
NEUTRAL = st.text(alphabet="0123456789 .,!?:;-_()[]+*#@%~😀🎉", max_size=20)
LATIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=10)


@given(NEUTRAL, HAN, NEUTRAL, st.text(alphabet="abc xyz", max_size=10))
def test_any_chinese_character_makes_a_text_chinese(before, han, after, latin):
    assert detect(before + latin + han + after) is Language.ZH


@given(NEUTRAL, LATIN, NEUTRAL)
def test_latin_letters_without_chinese_make_it_english(before, word, after):
    assert detect(before + word + after) is Language.EN


@given(NEUTRAL, st.sampled_from(["/memory-recall", "/goal", "/cancel", " /memory-recall"]))
def test_a_command_alone_shows_no_language(rest, command):
    assert detect(command + rest) is None
    assert choose([command + rest, "", "你还记得吗"]) is Language.ZH
    assert choose([command + rest]) is DEFAULT is Language.ZH


def test_a_command_s_json_and_identifiers_show_no_language():
    """`/hosted test_flow.add {"a": 2, "b": 3}` in a Chinese conversation is answered in Chinese: its JSON keys,
    numbers and identifiers are not words; its string values and the words after a command still are."""
    assert detect('/hosted test_flow.add {"a": 2, "b": 3}') is None
    assert detect('/hosted test_flow.add {"a": 2, "b": [1, true, null]}') is None
    assert choose(['/hosted test_flow.add {"a": 2, "b": 3}', "你好"]) is Language.ZH
    assert choose(['/hosted test_flow.add {"a": 2}', "hello"]) is Language.EN
    # A JSON string value is the user's own words.
    assert detect('/hosted test_flow.echo {"text": "你好"}') is Language.ZH
    assert detect('/hosted test_flow.echo {"text": "hello there"}') is Language.EN
    assert detect('/hosted test_flow.echo {"text": "say \\"hi\\""}') is Language.EN
    assert detect("/goal run ten kilometres") is Language.EN
    assert detect("/goal 跑一次十公里") is Language.ZH
    # Without a command nothing is taken out.
    assert detect('{"a": 2}') is Language.EN


def request(text: str, *blocks: SystemBlock, earlier: tuple[str, ...] = ()) -> ModelRequest:
    return ModelRequest(system=blocks, messages=(*(ChatMessage("user", e) for e in earlier), ChatMessage("user", text)))


RECALL = SystemBlock(BlockKind.RECALL, "Answer with these.", source="memory-recall", facts=("我喜欢爬山",))
EMPTY = SystemBlock(BlockKind.RECALL_EMPTY, "Say you cannot recall.", source="memory-recall")


def test_a_bare_command_is_answered_in_the_conversations_language():
    model = OfflineModel()
    assert model.reply_text(request("/memory-recall", RECALL, earlier=("你好",))) == "我记得这些：\n我喜欢爬山"
    assert model.reply_text(request("/memory-recall", RECALL, earlier=("hello",))) == "Here is what I remember:\n我喜欢爬山"
    assert model.reply_text(request("/memory-recall", EMPTY, earlier=("hi", "你好"))) == "我想不起确切的内容了。"
    assert model.reply_text(request("/memory-recall", EMPTY, earlier=("你好", "hi"))) == "I can't recall that exactly."


def test_the_grant_notice_is_written_in_the_users_language():
    zh = denied_notice(MEMORY_RECALL, Language.ZH).facts[0]
    en = denied_notice(MEMORY_RECALL, Language.EN).facts[0]
    assert "授权" in zh and "memory:read" in zh and "Skills" in zh
    assert en.startswith("I need your permission") and "memory:read" in en
    notice = SystemBlock(BlockKind.NOTICE, "t", source="memory-recall", facts=(zh,))
    assert OfflineModel().reply_text(request("你还记得我喜欢什么吗", notice)) == zh


def test_degraded_replies_and_workflow_prompts_follow_the_user():
    down = FakeModel(error=ModelError("throttled"))
    assert executor(down).execute(context("今天好累")).reply == DEGRADED_REPLY[1]
    assert executor(down).execute(context("so tired today")).reply == DEGRADED_REPLY[0]
    # No language in the text: the user's earlier messages decide.
    chinese_before = History([history_message(Role.USER, "今天好累"), history_message(Role.ASSISTANT, "I hear you")])
    assert executor(down).execute(context("...", history=chinese_before)).reply == DEGRADED_REPLY[1]
    english_before = History([history_message(Role.USER, "so tired")])
    assert executor(down).execute(context("👍", history=english_before)).reply == DEGRADED_REPLY[0]
    assert executor(FakeModel()).execute(context("/goal 跑个半马")).reply.startswith("好的")
    assert executor(FakeModel()).execute(context("/goal run a 10k")).reply.startswith("Got it")


def test_an_automation_summary_follows_the_users_lines_not_the_prompt():
    def summary(*lines: str, prompt: str) -> str:
        blocks = (SystemBlock(BlockKind.AUTOMATION, "task"),
                  SystemBlock(BlockKind.TRANSCRIPT, "data", facts=tuple(f"user: {line}" for line in lines)))
        return OfflineModel().reply_text(ModelRequest(system=blocks, messages=(ChatMessage("user", prompt),),
                                                      tools=(ToolSpec("memory_write", "", {}),)))

    assert summary("I like tea", prompt="整理今天的记忆") == "Memory review done: 0 saved, 0 forgotten."
    assert summary("我喜欢茶", prompt="Review today's memories") == "记忆整理完成：保存 0 条，忘记 0 条。"
    assert summary("123", prompt="Review today's memories") == "Memory review done: 0 saved, 0 forgotten."
