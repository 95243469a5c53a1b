"""Going live across processes and restarts (docs/api.md §18), black-box: `python app.py` processes on
one store, the fake platform in the test. A schedule runs once, survives a restart, and a submission a
killed process left is reported, never repeated."""

import os
import signal
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers.live_processes import live_of, published, service, store_of
from tests.helpers.publishing import went_live_days_ago
from tests.helpers.served import wait_for_passes
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores


def test_two_processes_submit_a_schedule_once(tmp_path, settings, fake):
    fake.withhold_events = True  # both processes poll, too
    with ExitStack() as stack:
        first, second = (stack.enter_context(service(tmp_path, settings)) for _ in range(2))
        task = published(first[0], first[1])
        at = datetime.now(UTC) + timedelta(seconds=2)
        answer = first[1].post(
            f"{first[0]}/api/review/tasks/{task['id']}/go-live", json={"at": at.isoformat()}, timeout=10
        )
        assert answer.status_code == 202, answer.text
        wait_until(lambda: (live_of(second[0], second[1], task) or {}).get("status") == "live", 30, "not live")
        wait_for_passes([first[0], second[0]], "live-worker")  # both workers have passed since
    assert len(fake.requests_to("freepublish/submit")) == 1


def test_a_restart_keeps_the_schedule(tmp_path, settings, fake):
    with service(tmp_path, settings) as (base, session, _process):
        task = published(base, session)
        at = datetime.now(UTC) + timedelta(seconds=6)
        assert (
            session.post(
                f"{base}/api/review/tasks/{task['id']}/go-live", json={"at": at.isoformat()}, timeout=10
            ).status_code
            == 202
        )
    assert fake.requests_to("freepublish/submit") == []  # stopped before its time
    with service(tmp_path, settings) as (base, session, _process):
        status = live_of(base, session, task)["status"]
        assert status == "scheduled" or datetime.now(UTC) >= at, status  # a loaded machine may restart after `at`
        wait_until(lambda: live_of(base, session, task)["status"] == "live", 30, "not live after the restart")
    assert len(fake.requests_to("freepublish/submit")) == 1


def test_a_submission_a_killed_process_left_is_reported_not_repeated(tmp_path, settings, fake):
    with service(tmp_path, settings) as (base, session, process):
        task = published(base, session)
        fake.hang_next("freepublish/submit", 20)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: len(fake.requests_to("freepublish/submit")) == 1, 20, "no submission")
        assert live_of(base, session, task)["status"] == "submitting"
        os.kill(process.pid, signal.SIGKILL)  # between the record and the platform's answer
        process.wait(timeout=10)
    with service(tmp_path, settings) as (base, session, _process):
        wait_until(lambda: live_of(base, session, task)["status"] == "failed", 30, "not reported")
        live = live_of(base, session, task)
        assert "may have been submitted" in live["failReason"]
        wait_for_passes([base], "live-worker")
    assert len(fake.requests_to("freepublish/submit")) == 1


def test_several_processes_fetch_a_days_statistics_once(tmp_path, settings, fake):
    """The daily job (docs/api.md §19) in three processes: yesterday's figures are asked for once."""
    fake.publish_seconds = 0.05
    with service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}) as (base, session, _process):
        task = published(base, session)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task)["status"] == "live", 30, "not live")
        # So yesterday's figures are the platform's to give.
        went_live_days_ago(task["id"], 1, fake, store_of(tmp_path, settings))
        # Two more processes start now: each one's worker looks at the statistics at once.
        with ExitStack() as stack:
            others = [
                stack.enter_context(service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}))[0] for _ in range(2)
            ]
            wait_until(lambda: fake.requests_to("getarticletotaldetail"), 30, "no fetch")
            wait_for_passes(others, "stats", more=0, at_least=1)  # each has looked since the article went live
    calls = fake.requests_to("getarticletotaldetail")
    assert len(calls) == 1, [call["json"] for call in calls]
