"""Selector and payload evals: prints precision and recall per skill; exits 1 below the threshold.

`make evals` runs this; CI runs it too. The labelled cases live in tests/evals/. Each run also writes the
summary the Skills page shows (评测摘要, Activity section) to `web/data/evals.json`, which is checked in: its
content depends only on the cases and the results (no timestamp), so it changes only when they do, and
`tests/harness/unit/test_evals_summary.py` fails when the checked-in file is not what a fresh run computes.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from skillcore.conversations.models import ConversationKind
from skillcore.executor.selection import selected_skill
from skillcore.skills.builtin import SKILLS
from tests.evals.payload_cases import CASES as PAYLOAD_CASES
from tests.evals.selector_cases import CASES

THRESHOLD = 0.95
PAYLOAD_SKILL = "goal-check-in-reminder"
SUMMARY = Path(__file__).resolve().parents[1] / "web" / "data" / "evals.json"


def evaluate() -> tuple[dict[str, tuple[float, float, int]], list[str]]:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    mistakes: list[str] = []
    for text, kind, disabled, expected in CASES:
        got = selected_skill(SKILLS, text, ConversationKind(kind), frozenset(disabled))
        if got == expected:
            if expected:
                tp[expected] += 1
            continue
        mistakes.append(f"{text!r} ({kind}, disabled={list(disabled)}): expected {expected}, got {got}")
        if got:
            fp[got] += 1
        if expected:
            fn[expected] += 1
    skills = sorted({e for *_, e in CASES if e} | set(fp))
    scores = {}
    for skill in skills:
        precision = tp[skill] / (tp[skill] + fp[skill]) if tp[skill] + fp[skill] else 1.0
        recall = tp[skill] / (tp[skill] + fn[skill]) if tp[skill] + fn[skill] else 1.0
        scores[skill] = (precision, recall, tp[skill] + fn[skill])
    return scores, mistakes


def evaluate_payloads() -> tuple[int, list[str]]:
    """Background payload evals: valid payloads accepted, anything else rejected by the skill's schema."""
    from pydantic import ValidationError

    definition = SKILLS.background.latest(PAYLOAD_SKILL)
    assert definition is not None
    wrong = []
    for name, payload, accepted in PAYLOAD_CASES:
        try:
            definition.payload_model.model_validate(payload)
            got = True
        except ValidationError:
            got = False
        if got != accepted:
            wrong.append(f"{name}: expected {'accepted' if accepted else 'rejected'}")
    return len(PAYLOAD_CASES) - len(wrong), wrong


def summary(scores: dict[str, tuple[float, float, int]], payload_right: int) -> dict[str, Any]:
    """What the page shows: per skill precision, recall and labelled cases; the payload evals; the threshold."""
    return {
        "threshold": THRESHOLD,
        "selector": {
            "cases": len(CASES),
            "skills": [
                {
                    "skillId": skill,
                    "precision": round(precision, 4),
                    "recall": round(recall, 4),
                    "cases": cases,
                }
                for skill, (precision, recall, cases) in scores.items()
            ],
        },
        "payload": {"skillId": PAYLOAD_SKILL, "right": payload_right, "total": len(PAYLOAD_CASES)},
    }


def render(content: dict[str, Any]) -> str:
    return json.dumps(content, indent=2, ensure_ascii=False) + "\n"


def compute_summary() -> dict[str, Any]:
    scores, _ = evaluate()
    right, _ = evaluate_payloads()
    return summary(scores, right)


def main() -> int:
    scores, mistakes = evaluate()
    print(f"selector evals: {len(CASES)} labelled utterances")
    print(f"{'skill':<16}{'precision':>10}{'recall':>10}{'cases':>8}")
    for skill, (precision, recall, cases) in scores.items():
        print(f"{skill:<16}{precision:>10.3f}{recall:>10.3f}{cases:>8}")
    for line in mistakes:
        print("  miss:", line)
    right, wrong = evaluate_payloads()
    print(f"payload evals (goal-check-in-reminder): {right}/{len(PAYLOAD_CASES)} correct")
    for line in wrong:
        print("  wrong:", line)
    # Written whatever the outcome: the page shows what the last run computed, a regression included.
    SUMMARY.parent.mkdir(parents=True, exist_ok=True)
    SUMMARY.write_text(render(summary(scores, right)), encoding="utf-8")
    print(f"summary written to {SUMMARY.relative_to(SUMMARY.parents[2])}")
    failing = [s for s, (p, r, _) in scores.items() if p < THRESHOLD or r < THRESHOLD]
    if wrong:
        failing.append("goal-check-in-reminder payload")
    if failing:
        print(f"FAILED: below {THRESHOLD} for {', '.join(failing)}")
        return 1
    print(f"all skills at or above {THRESHOLD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
