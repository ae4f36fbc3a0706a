"""Lightweight retrieval for the memory recall tool: term extraction and ranking, pure functions.

Terms: CJK runs become overlapping bigrams (and the run itself when it is 2-4 characters), other text
becomes lower-cased word tokens of 2+ characters. Filler terms of recall questions ("还记得", "remember")
are dropped so they cannot match every memory. Ranking: number of distinct matched terms, then importance,
then recency; memories that match nothing are not returned.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable

from skillcore.language import CJK_CHARACTER
from skillcore.memory.models import MemoryItem

MAX_RESULTS = 6

# Plain strings, compiled on first use through `re`'s cache: this module is imported by functions that never rank.
_CJK_RUN = CJK_CHARACTER + "+"
_WORD = r"[0-9a-z][0-9a-z'_-]*[0-9a-z]|[0-9a-z]{2,}"

_CJK_STOP = frozenset(
    ["你还", "还记", "记得", "得我", "得吗", "你记", "记不", "不记", "我的", "的吗", "什么", "么吗", "吗", "一下", "是什", "我之", "之前", "前说", "说过", "过什", "提过", "告诉", "诉过", "过你", "我喜", "你知", "知道", "道我", "我什", "么东", "东西", "喜欢什", "欢什"]
)
_WORD_STOP = frozenset(
    ["a", "an", "the", "and", "or", "but", "do", "does", "did", "you", "your", "yours", "i", "me", "my", "mine", "we", "our", "is", "are", "was", "were", "be", "been", "am", "to", "of", "in", "on", "at", "for", "with", "about", "what", "when", "where", "who", "whom", "which", "how", "that", "this", "these", "those", "it", "its", "remember", "recall", "know", "tell", "told", "again", "please", "can", "could", "would", "will", "have", "has", "had", "any", "anything", "something", "ever", "said", "say"]
)


def extract_terms(text: str) -> frozenset[str]:
    terms: set[str] = set()
    for run in re.findall(_CJK_RUN, text):
        if 2 <= len(run) <= 4:
            terms.add(run)
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
    for word in re.findall(_WORD, text.lower()):
        terms.add(word)
    return frozenset(t for t in terms if t not in _CJK_STOP and t not in _WORD_STOP)


def _haystack(memory: MemoryItem) -> str:
    return f"{memory.title}\n{memory.content}".lower()


def score(terms: frozenset[str], memory: MemoryItem) -> int:
    haystack = _haystack(memory)
    return sum(1 for term in terms if term in haystack)


def rank(question: str, memories: Iterable[MemoryItem], limit: int = MAX_RESULTS) -> list[MemoryItem]:
    terms = extract_terms(question)
    if not terms:
        return []
    scored = ((score(terms, m), m) for m in memories)
    best = heapq.nlargest(
        limit,
        ((s, m) for s, m in scored if s > 0),
        key=lambda pair: (pair[0], pair[1].importance, pair[1].updated_at, pair[1].memory_id),
    )
    return [m for _, m in best]


def most_important(memories: Iterable[MemoryItem], limit: int = MAX_RESULTS) -> list[MemoryItem]:
    """A recall with no query: the most important memories, the most recently updated first among equals."""
    return heapq.nlargest(limit, memories, key=lambda m: (m.importance, m.updated_at, m.memory_id))
