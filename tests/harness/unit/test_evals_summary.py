"""The evaluation summary the Skills page ships (web/data/evals.json) is what `make evals` computes today."""

from __future__ import annotations

import json

from scripts import evals


def test_the_checked_in_summary_is_a_fresh_computation() -> None:
    checked_in = evals.SUMMARY.read_text(encoding="utf-8") if evals.SUMMARY.is_file() else ""
    assert checked_in == evals.render(evals.compute_summary()), (
        "web/data/evals.json is out of date: run `make evals` and commit it"
    )


def test_the_summary_holds_every_labelled_skill_and_the_payload_evals() -> None:
    content = json.loads(evals.render(evals.compute_summary()))
    expected = {e for *_, e in evals.CASES if e}
    assert {s["skillId"] for s in content["selector"]["skills"]} >= expected
    assert content["selector"]["cases"] == len(evals.CASES)
    assert content["payload"]["total"] == len(evals.PAYLOAD_CASES)
    assert content["threshold"] == evals.THRESHOLD
    # No timestamp or other run-dependent field: the file changes only when the results do.
    assert evals.render(evals.compute_summary()) == evals.render(evals.compute_summary())


def test_a_changed_result_changes_the_summary() -> None:
    scores, _ = evals.evaluate()
    right, _ = evals.evaluate_payloads()
    worse = {skill: (0.5, recall, cases) for skill, (_, recall, cases) in scores.items()}
    assert evals.render(evals.summary(worse, right)) != evals.render(evals.summary(scores, right))
    assert evals.render(evals.summary(scores, right - 1)) != evals.render(evals.summary(scores, right))
