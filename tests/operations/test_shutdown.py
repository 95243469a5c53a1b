"""Graceful shutdown of the served process (docs/api.md §11): SIGTERM during a slow publish."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from models import PublishJob, PublishLock, db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin
from tests.helpers.publishing import platform_settings
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset
from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
GRACE = 20


@pytest.mark.timeout(120)
def test_sigterm_during_a_slow_publish_finishes_it_and_exits_0(make_app, tmp_path, fake):
    settings = {
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        **platform_settings(fake),
        "WECHAT_TIMEOUT_SECONDS": 30,
    }
    app = make_app(**settings)
    create_admin()
    admin = app.test_client()
    admin.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    agent = {"x-review-agent-token": AGENT_TOKEN}
    task = create_task(admin, agent, article_payload())
    approved = admin.post(decision_url(task), json=approve_article(task, make_asset(app, 900, 500)))
    assert approved.status_code == 200, approved.get_json()
    db.close()

    port = free_port()
    env = {
        **os.environ,
        **{key: str(value) for key, value in settings.items()},
        "PORT": str(port),
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "SHUTDOWN_GRACE_SECONDS": str(GRACE),
    }
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers_ok(f"{base}/healthz"), 60, "the service did not start")
        session = requests.Session()
        signed_in = session.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": ADMIN_PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert signed_in.status_code == 303 and "error" not in signed_in.headers["Location"]
        draft_answer = fake.hold_next("draft/add", GRACE)  # answered once the test has seen the stop begin
        answer = {}
        publish = threading.Thread(
            target=lambda: answer.update(
                response=session.post(f"{base}/api/review/tasks/{task['id']}/publish-jobs", timeout=30)
            )
        )
        publish.start()
        wait_until(lambda: fake.requests_to("draft/add"), 20, "the publish never reached the draft call")
        os.kill(server.pid, signal.SIGTERM)
        stopped_at = time.monotonic()
        wait_until(lambda: not answers_ok(f"{base}/healthz"), 6, "still accepting connections after SIGTERM")
        assert server.poll() is None  # still finishing the publish in flight
        draft_answer.set()
        publish.join(timeout=30)
        code = server.wait(timeout=GRACE + 5)
        took = time.monotonic() - stopped_at
    finally:
        if server.poll() is None:
            server.kill()
        stderr = server.communicate(timeout=10)[1]
    response = answer["response"]
    assert response.status_code == 200, response.text
    assert [job["status"] for job in response.json()["publishJobs"]] == ["succeeded"]
    assert code == 0, stderr[-2000:]
    assert took < GRACE, took  # waited for the draft call, not for the grace
    assert "stopping: no new connections" in stderr and "stopped" in stderr

    make_app(**settings)  # the restart
    with db.connection_context():
        assert PublishLock.select().count() == 0
        assert [job.status for job in PublishJob.select()] == ["succeeded"]
