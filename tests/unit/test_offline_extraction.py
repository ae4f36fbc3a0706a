"""The offline extractor keeps what a request to remember asks for, never the command word itself."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillcore.automation.offline_extraction import plan
from skillcore.model.port import BlockKind, ChatMessage, ModelRequest, SystemBlock, ToolSpec


def extract(*lines: str) -> list[tuple[str, dict]]:
    request = ModelRequest(
        system=(SystemBlock(BlockKind.TRANSCRIPT, "data", facts=tuple(f"user: {line}" for line in lines)),),
        messages=(ChatMessage("user", "extract"),),
        tools=(ToolSpec("memory_write", "", {}), ToolSpec("memory_forget", "", {})),
    )
    return [(call.name, dict(call.input)) for call in plan(request)]


COMMANDS_ZH = ("记住", "请记住", "帮我记住", "记住：", "请记下", "别忘了", "不要忘记")
COMMANDS_EN = ("remember that ", "Remember ", "please remember: ", "Please remember that ", "don't forget that ")
# Subjects without sentence punctuation (which would split them) and without command words of their own.
SUBJECT_ZH = st.text(alphabet="我你他每周三游泳生日是五月一日猫叫团子喝茶早上跑步", min_size=1, max_size=30).filter(
    lambda s: not s.endswith(("吗", "么", "嘛", "呢")))
SUBJECT_EN = st.lists(st.sampled_from(["I", "swim", "on", "Wednesdays", "my", "cat", "is", "Mochi", "tea", "early"]),
                      min_size=1, max_size=8).map(" ".join)


@given(st.sampled_from(COMMANDS_ZH), SUBJECT_ZH)
def test_a_chinese_request_to_remember_keeps_only_its_object(command, subject):
    assert extract(command + subject) == [("memory_write", {"title": f"备忘: {subject[:60]}", "content": subject})]


@given(st.sampled_from(COMMANDS_EN), SUBJECT_EN)
def test_an_english_request_to_remember_keeps_only_its_object(command, subject):
    assert extract(command + subject) == [("memory_write", {"title": f"note: {subject[:60]}", "content": subject})]


def test_the_issue_example_and_statements_keep_their_sentence():
    assert extract("记住我每周三游泳") == [("memory_write", {"title": "备忘: 我每周三游泳", "content": "我每周三游泳"})]
    assert extract("我喜欢爬山") == [("memory_write", {"title": "喜欢: 爬山", "content": "我喜欢爬山"})]


def test_questions_about_memory_write_nothing():
    assert extract("你记住了吗", "记得吗", "do you remember my cat?", "Do you still remember my cat") == []


def test_negated_forgetting_is_a_request_to_remember():
    assert extract("别忘了我周五要交报告") == [
        ("memory_write", {"title": "备忘: 我周五要交报告", "content": "我周五要交报告"})]
    assert extract("don't forget that I swim") == [("memory_write", {"title": "note: I swim", "content": "I swim"})]
    assert extract("forget that I like jazz", "忘记我喜欢咖啡") == [
        ("memory_forget", {"match": "I like jazz"}), ("memory_forget", {"match": "我喜欢咖啡"})]
