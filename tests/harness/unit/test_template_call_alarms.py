"""The alarms on spikes of denied and failed calls watch metrics the code emits (observability.py's names and
outcomes, with the `service` roll-up), with their thresholds as parameters and the alarm topic's actions."""

from __future__ import annotations

import inspect
from typing import Any

from skillcore import observability
from skillcore.hosted import calls
from skillcore.tools import runner
from skillcore_local.template import load_template

ALARMS = {
    "DeniedCallsAlarm": ("DeniedCallsAlarmThreshold", {("ToolCall", "denied"), ("HostedCall", "denied")}),
    "FailedCallsAlarm": ("FailedCallsAlarmThreshold",
                         {("ToolCall", "failed"), ("ToolCall", "timed_out"), ("HostedCall", "failed")}),
}


def watched(alarm: dict[str, Any]) -> set[tuple[str, str]]:
    found = set()
    for query in alarm["Metrics"]:
        if "MetricStat" not in query:
            continue
        metric = query["MetricStat"]["Metric"]
        dims = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        assert dims.keys() == {"service", "outcome"} and dims["service"] == "skillcore"  # the roll-up
        assert metric["Namespace"] == {"Fn::Sub": "skillcore/${Stage}"}
        assert query["MetricStat"]["Stat"] == "Sum" and query["ReturnData"] is False
        found.add((metric["MetricName"], dims["outcome"]))
    return found


def test_the_call_alarms_watch_the_emitted_metrics_with_parameter_thresholds() -> None:
    template = load_template()
    resources, parameters = template["Resources"], template["Parameters"]
    for name, (threshold, metrics) in ALARMS.items():
        alarm = resources[name]["Properties"]
        assert watched(alarm) == metrics, name
        returned = [q for q in alarm["Metrics"] if q.get("ReturnData") is True]
        assert len(returned) == 1 and all(f"FILL({q['Id']}, 0)" in returned[0]["Expression"]
                                          for q in alarm["Metrics"] if "MetricStat" in q)
        assert alarm["Threshold"] == {"Ref": threshold} and parameters[threshold]["Type"] == "Number"
        assert alarm["TreatMissingData"] == "notBreaching"
        topic = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}
        assert alarm["AlarmActions"] == topic and alarm["OKActions"] == topic


def test_the_watched_metrics_are_emitted() -> None:
    assert observability.TOOL_CALL == "ToolCall" and observability.HOSTED_CALL == "HostedCall"
    assert "hosted_call(" in inspect.getsource(calls) and "tool_call(" in inspect.getsource(runner)


def test_a_hosted_call_is_counted_by_outcome_with_its_roll_up() -> None:
    events = observability._events
    events.take()
    observability.hosted_call("denied", "approval_required")
    documents = events.documents(events.take())
    assert [d["HostedCall"] for d in documents] == [1]
    assert documents[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service", "outcome", "reason"],
                                                                        ["service", "outcome"]]
