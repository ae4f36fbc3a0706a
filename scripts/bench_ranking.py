"""Section 4: memory ranking (`skillcore.memory.retrieval.rank`) over synthetic memories, in-process.

Memories are a deterministic mix of Chinese, English and mixed-language items of realistic lengths; the
questions are recall questions in both languages. Besides the total, the parts of one rank call are timed
separately (term extraction, lower-casing the haystacks, term matching) so a miss can be located.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from scripts.bench_common import Report, median

SECTION = "ranking"
TARGET_MS = 10.0

ZH_WORDS = [
    "爬山", "跑步", "咖啡", "猫", "狗", "妹妹", "哥哥", "妈妈", "工作", "护士", "医院", "火锅", "四川", "北京", "上海",
    "旅行", "京都", "樱花", "钢琴", "音乐", "电影", "书", "小说", "早上", "晚上", "周末", "公园", "阳台", "番茄",
    "罗勒", "西班牙语", "课", "生日", "十月", "朋友", "柏林", "睡觉", "失眠", "游泳", "健身", "目标", "马拉松",
    "减肥", "瑜伽", "茶", "蛋糕", "做饭", "养花", "摄影", "画画",
]
ZH_GLUE = ["我喜欢", "我不喜欢", "最近在", "每天", "我的", "打算", "经常", "有时候", "去", "和", "在", "想要", "已经"]
EN_WORDS = [
    "hiking", "running", "coffee", "cat", "dog", "sister", "brother", "mother", "work", "nurse", "hospital",
    "hotpot", "Lisbon", "Berlin", "Kyoto", "cherry", "blossoms", "piano", "music", "movies", "book", "novel",
    "morning", "evening", "weekend", "park", "balcony", "tomatoes", "basil", "Spanish", "lessons", "birthday",
    "October", "friend", "sleep", "insomnia", "swimming", "gym", "goal", "marathon", "yoga", "tea", "cake",
    "cooking", "plants", "photography", "painting", "chess", "allergic", "peanuts",
]
EN_GLUE = ["I like", "I don't like", "lately", "every day", "my", "planning to", "often", "sometimes", "goes to",
           "and", "at", "wants to", "already", "the", "a", "with"]

QUESTIONS = [
    ("zh", "你还记得我喜欢什么吗"),
    ("zh", "我之前说过我妹妹在哪个城市工作？"),
    ("en", "Do you remember where my sister lives?"),
    ("mixed", "还记得我 weekend 喜欢去 park 做什么吗"),
]


def _sentence(rng: random.Random, lang: str) -> str:
    if lang == "zh":
        parts = [rng.choice(ZH_GLUE) + rng.choice(ZH_WORDS) for _ in range(rng.randint(1, 4))]
        return "，".join(parts) + "。"
    if lang == "en":
        words = []
        for _ in range(rng.randint(4, 12)):
            words.append(rng.choice(EN_GLUE) if rng.random() < 0.4 else rng.choice(EN_WORDS))
        return " ".join(words).capitalize() + "."
    return rng.choice(ZH_GLUE) + rng.choice(EN_WORDS) + "，" + rng.choice(ZH_WORDS) + " " + rng.choice(EN_WORDS) + "。"


def synthetic_memories(count: int, seed: int = 4) -> list[Any]:
    """Items as the store returns them: 40% Chinese, 40% English, 20% mixed; 1-6 sentences each."""
    from skillcore.memory.models import MemoryItem, MemorySource, MemoryStatus

    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    items = []
    for i in range(count):
        roll = rng.random()
        lang = "zh" if roll < 0.4 else "en" if roll < 0.8 else "mixed"
        content = " ".join(_sentence(rng, lang) for _ in range(rng.randint(1, 6)))[:1000]
        title = (rng.choice(ZH_WORDS) if lang != "en" else rng.choice(EN_WORDS).capitalize())[:80]
        at = base + timedelta(minutes=i * 7)
        items.append(MemoryItem(
            memory_id=f"m{i:06d}", user_id="bench-user", agent_id="bench-agent", title=title, content=content,
            importance=rng.randint(1, 5), status=MemoryStatus.ACTIVE, source=MemorySource.USER,
            created_at=at, updated_at=at,
        ))
    return items


def _samples(fn: Callable[[], Any], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def _time(fn: Callable[[], Any], repeats: int) -> float:
    return median(_samples(fn, repeats))


def run(report: Report, *, quick: bool) -> None:
    from skillcore.memory import retrieval

    report.heading("4. Memory ranking: skillcore.memory.retrieval.rank, in-process")
    sizes = (1000, 10000)
    repeats = {1000: 9 if quick else 25, 10000: 3 if quick else 7}
    pools = {n: synthetic_memories(n) for n in sizes}
    lengths = [len(m.title) + len(m.content) for m in pools[1000]]
    report.line(f"  synthetic memories: 40% Chinese, 40% English, 20% mixed; title+content {min(lengths)}-{max(lengths)}"
                f" chars (median {median(lengths):.0f}); median of {repeats[1000]} (1k) / {repeats[10000]} (10k) runs")
    rows = []
    worst_1k = 0.0
    for lang, question in QUESTIONS:
        terms = retrieval.extract_terms(question)
        row: list[Any] = [lang, len(terms)]
        for n in sizes:
            pool = pools[n]
            retrieval.rank(question, pool)  # warm-up
            samples = _samples(partial(retrieval.rank, question, pool), repeats[n])
            seconds = median(samples)
            hits = sum(1 for m in pool if retrieval.score(terms, m) > 0)
            row += [f"{seconds * 1000:.2f}", f"{min(samples) * 1000:.2f}", hits]
            if n == 1000:
                worst_1k = max(worst_1k, seconds * 1000)
        rows.append([*row, question])
    report.table(
        ["lang", "terms", "1k: median ms", "1k: min ms", "1k: matching", "10k: median ms", "10k: min ms",
         "10k: matching", "question"],
        rows, align="lrrrrrrrl",
    )

    # Where the time of one 1k rank goes (the question with the most terms).
    question = max((q for _, q in QUESTIONS), key=lambda q: len(retrieval.extract_terms(q)))
    terms = retrieval.extract_terms(question)
    pool = pools[1000]
    r = repeats[1000]
    t_terms = _time(lambda: retrieval.extract_terms(question), r)
    t_hay = _time(lambda: [retrieval._haystack(m) for m in pool], r)
    hays = [retrieval._haystack(m) for m in pool]
    t_match = _time(lambda: [sum(1 for t in terms if t in h) for h in hays], r)
    t_score = _time(lambda: [retrieval.score(terms, m) for m in pool], r)
    t_total = _time(lambda: retrieval.rank(question, pool), r)
    report.line()
    report.line(f"  one rank of 1,000 memories, by part ({question!r}, {len(terms)} terms):")
    report.table(["part", "ms"], [
        ("extract_terms(question)", f"{t_terms * 1000:.3f}"),
        ("_haystack() for every memory (f-string + lower())", f"{t_hay * 1000:.2f}"),
        ("term `in` haystack for every memory", f"{t_match * 1000:.2f}"),
        ("score() for every memory (the two above)", f"{t_score * 1000:.2f}"),
        ("rank() total (score + heapq.nlargest)", f"{t_total * 1000:.2f}"),
    ])
    report.line()
    report.line(f"  1,000 memories: worst median {worst_1k:.2f} ms over the questions (target <= {TARGET_MS:g} ms): "
                + report.verdict(SECTION, "rank 1,000 memories", f"{worst_1k:.2f} ms", f"<= {TARGET_MS:g} ms",
                                 worst_1k <= TARGET_MS))
