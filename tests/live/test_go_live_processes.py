"""Going live across processes and restarts (docs/api.md §18), black-box: `python app.py` processes on
one store, the fake platform in the test. A schedule runs once, survives a restart, and a submission a
killed process left is reported, never repeated."""
import os
import signal
import time
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.helpers.publishing import ACCOUNTS
from tests.helpers.review import article_payload, png_bytes
from tests.helpers.served import _serve, wait_until

pytestmark = pytest.mark.both_stores

AGENT = {"x-review-agent-token": "live-processes-agent-token-0123456789"}
PASSWORD = "a long enough password"


@pytest.fixture
def settings(database_url, fake):
    values = {"DATABASE_URL": database_url, "REVIEW_AGENT_TOKEN": AGENT["x-review-agent-token"],
              "REVIEW_ADMIN_USERNAME": "admin", "REVIEW_ADMIN_PASSWORD": PASSWORD, "WECHAT_API_BASE": fake.base_url,
              "WECHAT_PUBLISH_POLL_DELAYS": "0.3", "WECHAT_TIMEOUT_SECONDS": "60"}
    for account, (appid, secret) in ACCOUNTS.items():
        prefix = "WECHAT_" + account.upper().replace("-", "_")
        values[prefix + "_APPID"], values[prefix + "_SECRET"] = appid, secret
    return values


@contextmanager
def service(tmp_path, settings):
    with _serve(tmp_path, settings) as (base, _port, process):
        session = requests.Session()
        answer = session.post(f"{base}/api/auth/login", data={"username": "admin", "password": PASSWORD},
                              allow_redirects=False, timeout=10)
        assert answer.status_code == 303, answer.text
        yield base, session, process


def published(base, session):
    """A task published as a platform draft through the HTTP API."""
    cover = requests.post(f"{base}/api/assets/upload", headers=AGENT, timeout=30,
                          files={"file": ("cover.png", png_bytes(900, 500), "image/png")}).json()
    task = requests.post(f"{base}/api/review/agent/tasks", json=article_payload([cover["url"]]), headers=AGENT,
                         timeout=30).json()
    option = task["candidates"]["bodyOptions"][0]
    answer = session.post(f"{base}/api/review/tasks/{task['id']}/decision", timeout=60, json={
        "action": "approve_and_publish", "selections": {
            "title": task["candidates"]["titles"][0], "summary": "摘要", "body": option["content"],
            "coverImage": {"assetId": cover["assetId"]}}})
    assert answer.status_code == 200 and answer.json()["status"] == "published", answer.text[:500]
    return answer.json()


def live_of(base, session, task):
    return session.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()["live"]


def test_two_processes_submit_a_schedule_once(tmp_path, settings, fake):
    fake.withhold_events = True  # both processes poll, too
    with ExitStack() as stack:
        first, second = (stack.enter_context(service(tmp_path, settings)) for _ in range(2))
        task = published(first[0], first[1])
        at = datetime.now(UTC) + timedelta(seconds=2)
        answer = first[1].post(f"{first[0]}/api/review/tasks/{task['id']}/go-live", json={"at": at.isoformat()},
                               timeout=10)
        assert answer.status_code == 202, answer.text
        wait_until(lambda: (live_of(second[0], second[1], task) or {}).get("status") == "live", 30, "not live")
        time.sleep(1.5)  # both workers have passed several times since
    assert len(fake.requests_to("freepublish/submit")) == 1


def test_a_restart_keeps_the_schedule(tmp_path, settings, fake):
    with service(tmp_path, settings) as (base, session, _process):
        task = published(base, session)
        at = datetime.now(UTC) + timedelta(seconds=6)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={"at": at.isoformat()},
                            timeout=10).status_code == 202
    assert fake.requests_to("freepublish/submit") == []  # stopped before its time
    with service(tmp_path, settings) as (base, session, _process):
        assert live_of(base, session, task)["status"] == "scheduled"
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
        time.sleep(1.5)
    assert len(fake.requests_to("freepublish/submit")) == 1


def test_several_processes_fetch_a_days_statistics_once(tmp_path, settings, fake):
    """The daily job (docs/api.md §19) in three processes: yesterday's figures are asked for once."""
    fake.publish_seconds = 0.05
    with service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}) as (base, session, _process):
        task = published(base, session)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task)["status"] == "live", 30, "not live")
        # Two more processes start now: each one's worker looks at the statistics at once.
        with ExitStack() as stack:
            for _ in range(2):
                stack.enter_context(service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}))
            wait_until(lambda: session.get(f"{base}/api/review/tasks/{task['id']}/stats", timeout=10).json()["days"],
                       30, "no figures")
            time.sleep(2)  # every worker has passed since
    calls = fake.requests_to("getarticletotaldetail")
    assert len(calls) == 1, [call["json"] for call in calls]
