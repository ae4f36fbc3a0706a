"""skillcore.observability: the EMF documents of business events, and the template's alarms on them."""

from __future__ import annotations

import io
import json
import logging
import warnings
from typing import Any

import pytest

from skillcore import observability
from skillcore.observability import EventMetrics, code
from skillcore_local.template import load_template


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> EventMetrics:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    return EventMetrics(namespace="skillcore/test", service="skillcore")


def printed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_events_are_counted_per_dimension_values_and_roll_up_without_reason(provider, capsys):
    provider.count("BackgroundJob", outcome="failed", reason="grant_missing")
    provider.count("BackgroundJob", outcome="failed", reason="grant_missing")
    provider.count("BackgroundJob", outcome="failed", reason="transient_error")
    provider.count("ChatTurn", kind="plain", outcome="succeeded")
    provider.flush_metrics()
    docs = printed(capsys)
    counted = [(d.get("reason", d.get("kind")), d.get("BackgroundJob", d.get("ChatTurn"))) for d in docs]
    assert counted == [("grant_missing", 2), ("transient_error", 1), ("plain", 1)]
    (directive,) = docs[0]["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "skillcore/test"
    assert directive["Dimensions"] == [["service", "outcome", "reason"], ["service", "outcome"]]
    assert directive["Metrics"] == [{"Name": "BackgroundJob", "Unit": "Count"}]
    assert docs[0]["service"] == "skillcore" and docs[0]["outcome"] == "failed"
    assert docs[2]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service", "kind", "outcome"]]
    assert isinstance(docs[0]["_aws"]["Timestamp"], int)
    provider.flush_metrics()  # flushed events are gone
    assert capsys.readouterr().out == ""


def test_an_invocation_without_events_prints_nothing_and_warns_nothing(provider, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        provider.flush_metrics()
    assert capsys.readouterr().out == ""


def test_disabled_metrics_print_nothing_and_still_forget_the_events(provider, capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    provider.count("ModelDegraded", reason="throttled")
    provider.flush_metrics()
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED")
    provider.flush_metrics()
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("value", "expected"), [
    ("grant_missing", "grant_missing"), ("timeout", "timeout"), ("I like tea", "other"), ("", "other"),
    ("Throttled", "other"), ("x" * 60, "other"), ("用户的话", "other"),
])
def test_dimension_values_are_codes_or_other(value, expected):
    assert code(value) == expected


def test_the_record_functions_map_outcomes(monkeypatch, capsys):
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    observability.metrics.flush_metrics()  # whatever earlier tests counted outside a handler
    capsys.readouterr()
    observability.tool_call("failed", "timeout")
    observability.tool_call("denied", "grant_missing")
    observability.tool_call("succeeded", None)
    observability.automation_run("succeeded", None)
    observability.metrics.flush_metrics()
    docs = printed(capsys)
    assert [(d["outcome"], d["reason"]) for d in docs] == [("timed_out", "timeout"), ("denied", "grant_missing"),
                                                          ("succeeded", "succeeded"), ("succeeded", "succeeded")]


def test_job_keys_are_on_the_log_lines_only_while_the_job_runs():
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(observability.logger.registered_formatter)  # the lines exactly as Lambda gets them
    logging.getLogger(observability.logger.name).addHandler(handler)
    try:
        with observability.job_keys(job_id="job-1", skill_id="goal-check-in-reminder"):
            observability.logger.info("inside")
        observability.logger.info("after")
    finally:
        logging.getLogger(observability.logger.name).removeHandler(handler)
    inside, after = (json.loads(line) for line in buffer.getvalue().splitlines())
    assert inside["job_id"] == "job-1" and inside["skill_id"] == "goal-check-in-reminder"
    assert "job_id" not in after and "skill_id" not in after


# ---------------------------------------------------------------------------------------------- template
def _resources(kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in load_template()["Resources"].items() if r["Type"] == kind}


def test_business_alarms_watch_the_roll_ups_the_functions_emit(provider, capsys):
    env = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    # (the metric-math alarms on calls: tests/harness/unit/test_template_call_alarms.py)
    alarms = {a["Properties"]["MetricName"]: a["Properties"] for a in _resources("AWS::CloudWatch::Alarm").values()
              if "MetricName" in a["Properties"]}
    emitted = {
        "BackgroundJob": {"outcome": "failed", "reason": "transient_error"},
        "AutomationRun": {"outcome": "failed", "reason": "run_error"},
        "ModelDegraded": {"reason": "timeout"},
    }
    for metric, dims in emitted.items():
        provider.count(metric, **dims)
    provider.flush_metrics()
    for doc in printed(capsys):
        (directive,) = doc["_aws"]["CloudWatchMetrics"]
        (metric,) = (m["Name"] for m in directive["Metrics"])
        alarm = alarms[metric]
        assert alarm["Namespace"] == env["POWERTOOLS_METRICS_NAMESPACE"] == {"Fn::Sub": "skillcore/${Stage}"}
        watched = {d["Name"]: d["Value"] for d in alarm["Dimensions"]}
        # An alarm matches a metric only on exactly one of its declared dimension sets, with the same values.
        assert sorted(watched) in [sorted(s) for s in directive["Dimensions"]]
        assert watched == {name: doc[name] for name in watched} | {"service": env["POWERTOOLS_SERVICE_NAME"]}
        assert alarm["TreatMissingData"] == "notBreaching"
    assert "Errors" in alarms  # the Lambda-error alarm stays


def test_every_alarm_notifies_the_optional_topic():
    for name, alarm in _resources("AWS::CloudWatch::Alarm").items():
        for actions in ("AlarmActions", "OKActions"):
            assert alarm["Properties"][actions] == {
                "Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}, name


def test_no_tracing_settings_that_nothing_reads():
    template = load_template()
    function_globals = template["Globals"]["Function"]
    assert "Tracing" not in function_globals
    assert not any(k.startswith("POWERTOOLS_TRACE") for k in function_globals["Environment"]["Variables"])
    for name, fn in _resources("AWS::Serverless::Function").items():
        assert "Tracing" not in fn["Properties"], name
