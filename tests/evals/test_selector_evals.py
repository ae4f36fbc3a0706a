"""The selector evals as a test: every skill keeps precision and recall at or above 0.95."""

from __future__ import annotations

from scripts.evals import THRESHOLD, evaluate
from tests.evals.selector_cases import CASES


def test_enough_labelled_cases_in_both_languages():
    chinese = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c[0])]
    assert len(CASES) >= 40 and len(chinese) >= 15 and len(CASES) - len(chinese) >= 15


def test_precision_and_recall_per_skill():
    scores, mistakes = evaluate()
    assert {"memory-recall", "goal-setting", "daily-plan"} <= set(scores)
    for skill, (precision, recall, _) in scores.items():
        assert precision >= THRESHOLD and recall >= THRESHOLD, (skill, precision, recall, mistakes)


def test_background_payload_evals():
    from scripts.evals import evaluate_payloads
    from tests.evals.payload_cases import CASES as PAYLOAD_CASES

    right, wrong = evaluate_payloads()
    assert wrong == [] and right == len(PAYLOAD_CASES)
