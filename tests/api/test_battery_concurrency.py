"""Reliability battery, concurrency part (issue 9, item 2), on a real threaded HTTP server.

- 8 threads x 200 concurrent writes of four kinds (task creation, PATCH of one shared task,
  feedback creation, image upload): every answer a success, no storage failure logged, and the
  exact number of rows, versions, timeline events and stored files afterwards.
- Connections are closed after failing requests: the process' open file count stays flat over
  500 failing requests (401, 400, 404, 405, 413, 409), each on its own TCP connection.
- The login throttle holds under a concurrent burst of wrong passwords.
"""

import concurrent.futures
import logging
import os
import threading
from pathlib import Path

import pytest
import requests

from models import Asset, db
from models.feedback import Feedback
from models.review import ReviewTask, TimelineEvent
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, built_app, create_admin
from tests.helpers.feedback import UNLIMITED
from tests.helpers.review import article_payload, create_task, live_server, png_bytes
from tests.helpers.waiting import wait_until

THREADS = 8
WRITES_PER_THREAD = 60  # 480 writes: enough to interleave all four kinds on every thread
CLIENT = {"x-feedback-client-token": "client-web-token"}
AGENT = {"x-review-agent-token": AGENT_TOKEN}


@pytest.fixture
def app(make_app):
    with built_app(make_app, **UNLIMITED) as application:
        yield application


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def _feedback(n):
    return {
        "type": "bug",
        "title": f"并发反馈 {n}",
        "content": f"第 {n} 条",
        "appName": "carbon-fitness",
        "appVersion": "2.3.0",
        "platform": "ios",
    }


def test_8_threads_x_60_concurrent_writes_all_succeed_with_exact_counts(app, client, caplog):
    caplog.set_level(logging.WARNING)
    shared = create_task(client, AGENT, article_payload())
    images = [png_bytes(8, 8) for _ in range(THREADS * WRITES_PER_THREAD // 4 + THREADS)]
    failures, done = [], []
    lock = threading.Lock()

    with live_server(app) as base:

        def worker(thread_no):
            session = requests.Session()
            for i in range(WRITES_PER_THREAD):
                n = thread_no * WRITES_PER_THREAD + i
                kind = n % 4
                if kind == 0:
                    response = session.post(
                        f"{base}/api/review/agent/tasks", headers=AGENT, json=article_payload(topic=f"并发 {n}")
                    )
                elif kind == 1:
                    response = session.patch(
                        f"{base}/api/review/agent/tasks/{shared['id']}/elements",
                        headers=AGENT,
                        json={"title": f"标题 {n}"},
                    )
                elif kind == 2:
                    response = session.post(f"{base}/api/feedbacks", headers=CLIENT, json=_feedback(n))
                else:
                    response = session.post(
                        f"{base}/api/assets/upload",
                        headers=AGENT,
                        files={"file": (f"{n}.png", images[n // 4], "image/png")},
                    )
                with lock:
                    (done if response.status_code in (200, 201) else failures).append(
                        (kind, response.status_code, response.text[:200])
                    )
            session.close()

        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(worker, range(THREADS)))

    assert failures == []
    assert len(done) == THREADS * WRITES_PER_THREAD
    per_kind = THREADS * WRITES_PER_THREAD // 4
    storage_errors = [
        r.getMessage() for r in caplog.records if "storage failure" in r.getMessage() or "locked" in r.getMessage()
    ]
    assert storage_errors == []
    with db.connection_context():
        assert ReviewTask.select().count() == 1 + per_kind
        assert ReviewTask.get(ReviewTask.task_id == shared["id"]).version == shared["version"] + per_kind
        assert TimelineEvent.select().where(TimelineEvent.type == "draft_saved").count() == per_kind
        assert Feedback.select().count() == per_kind
        stored = {a.stored_name for a in Asset.select()}
    assert len(stored) == per_kind
    on_disk = {p.name for p in (Path(app.config["REVIEW_UPLOADS_PATH"]) / "review").iterdir()}
    assert on_disk == stored  # every row has its file, no file without a row, no temporary file left


def _failing_requests(base, feedback_id):
    """(method, url, kwargs, expected status) of requests that all fail, each a different way."""
    big = b"x" * (3 * 1024 * 1024)
    return [
        ("GET", f"{base}/api/review/agent/tasks/nope", {}, 401),
        ("GET", f"{base}/api/review/agent/tasks/nope", {"headers": AGENT}, 404),
        ("POST", f"{base}/api/review/agent/tasks", {"headers": AGENT, "data": b"{not json"}, 400),
        (
            "POST",
            f"{base}/api/review/agent/tasks",
            {"headers": {**AGENT, "content-type": "application/json"}, "data": big},
            413,
        ),
        ("PUT", f"{base}/api/review/agent/tasks", {"headers": AGENT}, 405),
        ("POST", f"{base}/api/feedbacks", {"headers": CLIENT, "json": _feedback(0)}, 409),  # duplicate
        ("PATCH", f"{base}/api/review/agent/tasks/nope/elements", {"headers": AGENT, "json": {"title": "x"}}, 404),
        ("GET", f"{base}/uploads/review/..%2f..%2finstance%2freview.db", {"headers": AGENT}, 404),
        (
            "POST",
            f"{base}/api/assets/upload",
            {"headers": AGENT, "files": {"file": ("a.png", b"not an image", "image/png")}},
            400,
        ),
        ("GET", f"{base}/api/feedbacks/{feedback_id}", {}, 401),
    ]


def test_open_files_stay_flat_over_500_failing_requests(app, client):
    created = client.post("/api/feedbacks", headers=CLIENT, json=_feedback(0))
    assert created.status_code == 201
    with live_server(app) as base:
        plan = _failing_requests(base, created.get_json()["id"])

        def run(count):
            statuses = []
            for n in range(count):
                method, url, kwargs, expected = plan[n % len(plan)]
                # A new TCP connection each time, closed by the client: the server must close its side too.
                headers = {"Connection": "close", **kwargs.get("headers", {})}
                others = {key: value for key, value in kwargs.items() if key != "headers"}
                with requests.request(method, url, headers=headers, timeout=30, **others) as response:
                    statuses.append((response.status_code, expected))
            return statuses

        warm = run(len(plan) * 5)  # pooled database connections and lazily opened files exist now
        before = open_fds()
        statuses = run(500)
        # The server's last handler threads may still be closing their sockets on a loaded machine (+3 seen
        # once): what counts is what is left once they are done; a leak would be hundreds.
        settled = lambda: open_fds() - before <= 2  # noqa: E731
        wait_until(settled, 10, f"open files grew from {before} to {open_fds()}")
    wrong = [pair for pair in warm + statuses if pair[0] != pair[1]]
    assert wrong == []


def test_login_throttle_holds_under_a_concurrent_burst(app):
    """20 wrong passwords at once for one admin: at most 5 are checked, then even the right password is refused."""
    create_admin()
    with live_server(app) as base:

        def attempt(password):
            response = requests.post(
                f"{base}/api/auth/login",
                data={"username": "admin", "password": password},
                allow_redirects=False,
                timeout=30,
            )
            return response.headers["Location"], "review_admin_session=" in response.headers.get("Set-Cookie", "")

        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            outcomes = list(pool.map(attempt, [f"wrong password {n}" for n in range(20)]))
        right = attempt(ADMIN_PASSWORD)
    checked = [location for location, _ in outcomes if location == "/login?error=invalid_credentials"]
    refused = [location for location, _ in outcomes if location == "/login?error=too_many_attempts"]
    assert len(checked) + len(refused) == 20
    assert len(checked) <= 5, f"{len(checked)} passwords were tried in one burst; the limit is 5"
    assert right == ("/login?error=too_many_attempts", False)
