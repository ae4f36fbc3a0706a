"""Records written by the automation and background stores check themselves, so no code path can store
an item its reader rejects; and a malformed item reads as one typed error that leaks nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from skillcore.automation import store as automation_store
from skillcore.automation.models import (
    AutomationConfig,
    AutomationJob,
    AutomationRun,
    AutomationStatus,
    RunStatus,
)
from skillcore.background import job_store
from skillcore.background.lifecycle import JobStatus
from skillcore.background.models import BackgroundJob
from skillcore.db.records import UnreadableRecord

T = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
JOB = AutomationJob(
    job_id="j1", user_id="u1", title="每日记忆整理", schedule_type="daily", local_time="10:00", weekday=None,
    timezone="Asia/Shanghai", agent_id=None, config=AutomationConfig(prompt="p", tools=("memory_write",)),
    status=AutomationStatus.ACTIVE, next_run_at=T, created_at=T, updated_at=T,
)
RUN = AutomationRun(job_id="j1", run_id="r1", scheduled_slot=T, status=RunStatus.SUCCEEDED, started_at=T)
BG = BackgroundJob(
    job_id="b1", user_id="u1", skill_id="goal-check-in-reminder", skill_version="1.0.0", agent_id="a1",
    conversation_id="c1", grant_id=None, payload={"note": "x"}, status=JobStatus.SCHEDULED, scheduled_at=T,
    next_attempt_at=T, attempts=0, max_attempts=3, revision=1, created_at=T, updated_at=T,
)
BAD = [None, "", " ", 3, True, "active", T.replace(tzinfo=None), [], {}]


@pytest.mark.parametrize("record", [JOB, RUN, BG], ids=["automation_job", "automation_run", "background_job"])
def test_every_field_refuses_wrong_values(record):
    refused = 0
    for name in record.__struct_fields__:
        for value in BAD:
            try:
                changed = replace(record, **{name: value})
            except (ValueError, TypeError):
                refused += 1
                continue
            # What is accepted must survive the store's round trip.
            store = automation_store if not isinstance(record, BackgroundJob) else job_store
            if isinstance(record, AutomationJob):
                assert store.job_from_item(_plain(store.to_job_item(changed))) == changed
            elif isinstance(record, AutomationRun):
                assert store.run_from_item(_plain(store.to_run_item(changed))) == changed
            else:
                assert store.job_from_item(_plain(store.to_job_item(changed))) == changed
    assert refused > len(record.__struct_fields__) * 3


def _plain(item):
    from skillcore.db.codec import from_item

    return from_item(item)


def test_a_patched_null_title_or_status_cannot_be_built():
    for change in ({"title": None}, {"status": None}, {"status": "paused"}, {"weekday": 3}, {"timezone": "Mars/Base"},
                   {"config": None}, {"local_time": "24:00"}):
        with pytest.raises(ValueError):
            replace(JOB, **change)


@given(st.sets(st.sampled_from(sorted(automation_store.to_job_item(JOB))), min_size=1))
def test_an_item_missing_attributes_reads_as_one_error_without_its_text(missing):
    item = {k: v for k, v in _plain(automation_store.to_job_item(JOB)).items() if k not in missing}
    try:
        job = automation_store.job_from_item(item)
    except UnreadableRecord as error:
        assert error.kind == "automation_job" and error.item_id == ("j1" if "pk" not in missing else "?")
        assert "每日" not in str(error) and error.__cause__ is None and error.__suppress_context__
    else:  # only optional attributes were missing
        assert job.job_id == "j1"


def test_a_skipped_item_is_logged_once_with_its_type_and_id_and_no_text(caplog):
    from skillcore.db.records import ScanFailures

    failures, quarantined = ScanFailures(), []
    secret = {"pk": "job-7", "title": "CANARY-我每周三游泳"}
    with pytest.raises(UnreadableRecord) as raised:
        automation_store.job_from_item(secret)
    with caplog.at_level("ERROR", logger="skillcore"):
        assert failures.record("automation_job", "job-7", raised.value, quarantine=quarantined.append) is True
        assert failures.record("automation_job", "job-7", raised.value, quarantine=quarantined.append) is False
        assert failures.record("background_job", "job-8", RuntimeError("CANARY in a message")) is True
    lines = [r for r in caplog.records if r.getMessage() == "scan skipped an item"]
    assert [(r.item_type, r.item_id, r.error_type) for r in lines] == [
        ("automation_job", "job-7", "KeyError"), ("background_job", "job-8", "RuntimeError")]
    assert all(r.exc_info is None for r in lines) and "CANARY" not in caplog.text
    assert failures.count == 2 and quarantined == ["job-7"]  # only an unreadable item leaves the index
