"""Two publishes of one task at once: one draft, one 409 publish_in_progress (real threaded server)."""

import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import requests

from models import db
from models.publishing import PublishLock
from models.review import ReviewTask
from rules.ids import iso, utcnow
from tests.helpers.app import ADMIN_PASSWORD, assert_error, reload_settings
from tests.helpers.publishing import approved_article, platform_settings, publish, publish_url
from tests.helpers.review import live_server
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


class Answer:
    """requests' response in the shape assert_error reads."""

    def __init__(self, response):
        self.status_code, self._json = response.status_code, response.json()
        self.text = response.text

    def get_json(self):
        return self._json

    def get_data(self, as_text=False):
        return self.text


def hang_draft(app, fake):
    """The next draft/add waits until the returned event is set (the test's other requests are done), inside
    the call's deadline."""
    app.config["WECHAT_TIMEOUT_SECONDS"] = 30
    reload_settings(app)
    return fake.hold_next("/draft/add", 20)


def test_a_second_publish_while_one_is_in_flight_is_refused_and_one_draft_is_made(
    app, admin_client, agent_headers, fake
):
    task, _ = approved_article(app, admin_client, agent_headers)
    other, _ = approved_article(app, admin_client, agent_headers)
    draft_answers = hang_draft(app, fake)
    with live_server(app) as base_url:
        session = requests.Session()
        login = session.post(
            f"{base_url}/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD}, allow_redirects=False
        )
        assert login.status_code == 303 and "error=" not in login.headers["Location"]
        answers = {}
        first = threading.Thread(target=lambda: answers.update(first=session.post(base_url + publish_url(task))))
        first.start()
        wait_until(
            lambda: fake.requests_to("/draft/add"), what="no draft/add", every=0.01
        )  # the first publish is inside the platform call

        second = Answer(session.post(base_url + publish_url(task)))
        # no transaction is held during the platform call: other writes and reads go through meanwhile
        in_flight = session.get(f"{base_url}/api/review/tasks/{task['id']}").json()
        other_answer = session.post(base_url + f"/api/review/tasks/{other['id']}/publish-jobs")
        other_done_first = first.is_alive()  # a held write transaction would have made it wait for the first
        draft_answers.set()
        first.join(timeout=40)

    error = assert_error(second, 409, "publish_in_progress")
    assert error["details"]["jobId"] == [in_flight["publishJobs"][0]["id"]]
    assert in_flight["status"] == "approved"
    assert other_answer.status_code == 200 and other_answer.json()["status"] == "published"
    assert other_done_first
    done = answers["first"].json()
    assert answers["first"].status_code == 200 and done["status"] == "published"
    [job] = done["publishJobs"]
    assert job["status"] == "succeeded" and job["id"] == in_flight["publishJobs"][0]["id"]
    # one draft for this task, one for the other task: the refused publish never reached the platform
    assert len(fake.requests_to("/draft/add")) == 2
    assert set(fake.drafts) == {job["draftMediaId"], other_answer.json()["publishJobs"][0]["draftMediaId"]}
    with db.connection_context():
        assert PublishLock.select().count() == 0  # both claims released


def test_a_task_being_published_is_not_deleted_under_it(app, admin_client, agent_headers, fake):
    """Its draft would reach the platform with no job left to record it (and the publish answer 404)."""
    task, _ = approved_article(app, admin_client, agent_headers)
    draft_answers = hang_draft(app, fake)
    with live_server(app) as base_url:
        session = requests.Session()
        session.post(
            f"{base_url}/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD}, allow_redirects=False
        )
        answers = {}
        first = threading.Thread(target=lambda: answers.update(publish=session.post(base_url + publish_url(task))))
        first.start()
        wait_until(
            lambda: fake.requests_to("/draft/add"), what="no draft/add", every=0.01
        )  # the publish is inside the platform call
        refused = Answer(session.delete(f"{base_url}/api/review/tasks/{task['id']}"))
        draft_answers.set()
        first.join(timeout=40)
        deleted = session.delete(f"{base_url}/api/review/tasks/{task['id']}")

    error = assert_error(refused, 409, "publish_in_progress")
    published = answers["publish"].json()
    assert answers["publish"].status_code == 200 and published["status"] == "published"
    assert error["details"] == {"jobId": [published["publishJobs"][0]["id"]]}
    assert set(fake.drafts) == {published["publishJobs"][0]["draftMediaId"]}  # the draft was recorded
    assert deleted.status_code == 200 and deleted.json()["deletedTaskId"] == task["id"]


def _claim(task, heartbeat_age):
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        moment = iso(utcnow() - heartbeat_age)
        PublishLock.create(task=row, job_id="job-of-a-crashed-process", created_at=moment, heartbeat_at=moment)


def test_a_live_claim_refuses_and_a_stale_one_is_taken_over(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)
    _claim(task, timedelta(seconds=30))

    error = assert_error(admin_client.post(publish_url(task)), 409, "publish_in_progress")
    assert error["details"] == {"jobId": ["job-of-a-crashed-process"]}
    assert fake.requests == []

    with db.connection_context():
        PublishLock.delete().execute()
    _claim(task, timedelta(minutes=6))  # no heartbeat for longer than the stale limit (5 min)
    published = publish(admin_client, task).get_json()

    assert published["status"] == "published"
    with db.connection_context():
        assert PublishLock.select().count() == 0


def _interrupted_publish(app, task, **owner):
    """A publish claimed by a process like this one but for `owner`'s fields, that never finished."""
    import json

    from services import owners
    from services.publishing import jobs

    with db.connection_context():
        claim = jobs._claim(task["id"], None, app.extensions["settings"], "manual")
        PublishLock.update(owner=json.dumps({**json.loads(owners.this_process()), **owner})).where(
            PublishLock.job_id == claim.job_id
        ).execute()
    return claim.job_id


def test_a_claim_taken_over_records_its_job_as_failed(app, admin_client, agent_headers, fake):
    """A restarted container cannot end its predecessor's claim: the next publish takes it over after
    the stale limit. The abandoned job used to read "has not finished" forever."""
    task, _ = approved_article(app, admin_client, agent_headers)
    job_id = _interrupted_publish(app, task, pidns="pid:[1]", pid=999_999)
    with db.connection_context():
        PublishLock.update(heartbeat_at=iso(utcnow() - timedelta(minutes=6))).execute()

    published = publish(admin_client, task).get_json()

    abandoned, new = published["publishJobs"]
    assert abandoned["id"] == job_id and abandoned["status"] == "failed" and abandoned["finishedAt"]
    assert "stopped giving signs of life" in abandoned["lastError"]
    assert new["status"] == "succeeded" and published["status"] == "published"
    failed = [e for e in published["timeline"] if e["type"] == "publish_failed"]
    assert [(e["actor"], e["data"]["jobId"]) for e in failed] == [("system", job_id)]


def test_a_restart_ends_the_claims_of_a_service_process_that_stopped(make_app, fake, app, admin_client, agent_headers):
    """Before: the task answered 409 publish_in_progress until the claim went stale (5 minutes)."""
    import subprocess
    import sys

    from services.publishing.jobs import INTERRUPTED

    stopped = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )  # a process that has ended: its pid runs nothing now
    task, _ = approved_article(app, admin_client, agent_headers)
    job_id = _interrupted_publish(app, task, pid=int(stopped.stdout))
    # Claims this start cannot judge stay: a live process (this test's parent), another container's
    # pid (its own pid namespace), and this very process (a second app built while it publishes).
    kept = {}
    for name, owner in (
        ("live", {"pid": os.getppid()}),
        ("container", {"pidns": "pid:[1]", "pid": 999_999}),
        ("same process", {}),
    ):
        other, _ = approved_article(app, admin_client, agent_headers)
        kept[name] = (other, _interrupted_publish(app, other, **owner))
    assert_error(admin_client.post(publish_url(task)), 409, "publish_in_progress")

    restarted = make_app(**platform_settings(fake))
    client = restarted.test_client()
    client.set_cookie("review_admin_session", admin_client.get_cookie("review_admin_session").value, domain="localhost")
    after = client.get(f"/api/review/tasks/{task['id']}").get_json()
    [job] = after["publishJobs"]
    assert (job["id"], job["status"], job["lastError"]) == (job_id, "failed", INTERRUPTED)
    assert job["finishedAt"] and after["status"] == "approved"
    assert (after["timeline"][-1]["type"], after["timeline"][-1]["actor"]) == ("publish_failed", "system")
    published = publish(client, after).get_json()  # at once, not after the stale limit
    assert published["status"] == "published" and published["publishJobs"][-1]["status"] == "succeeded"
    for name, (other, claimed) in kept.items():
        error = assert_error(client.post(publish_url(other)), 409, "publish_in_progress")
        assert error["details"]["jobId"] == [claimed], name


def test_a_command_beside_the_service_leaves_its_claims_alone(app, admin_client, agent_headers, tmp_path):
    """`flask --app app …` builds the app too; a claim whose process it cannot see is not its to end."""
    import subprocess
    import sys

    stopped = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    task, _ = approved_article(app, admin_client, agent_headers)
    _interrupted_publish(app, task, pid=int(stopped.stdout))
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": app.config["REVIEW_INSTANCE_PATH"],
        "REVIEW_UPLOADS_PATH": app.config["REVIEW_UPLOADS_PATH"],
    }
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "deactivate-admin", "nobody"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "nobody" in done.stdout + done.stderr
    with db.connection_context():
        assert PublishLock.select().count() == 1


def test_an_upload_that_outlasts_its_claims_first_period_is_not_made_twice(
    app, admin_client, agent_headers, fake, monkeypatch
):
    """Two tasks with one cover published at once: the first's add_material took longer than CLAIM_SECONDS
    (its deadline allows up to 2 × 20 s + 80 s for 10 MiB, more with a token renewed), and the claim, never
    renewed, was taken over: the cover went to the platform twice, a second permanent material."""
    from services.platform import uploads

    monkeypatch.setattr(uploads, "CLAIM_SECONDS", 1.2)  # renewed each 0.3 s: a loaded machine has time to spare
    first, cover = approved_article(app, admin_client, agent_headers)
    second, _ = approved_article(app, admin_client, agent_headers, cover=cover)
    fake.material_delay = 3.5  # within the tests' WECHAT_TIMEOUT_SECONDS of 5
    with live_server(app) as base_url:
        session = requests.Session()
        session.post(f"{base_url}/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
        answers = {}
        publishing = threading.Thread(target=lambda: answers.update(first=session.post(base_url + publish_url(first))))
        publishing.start()
        wait_until(lambda: fake.requests_to("add_material"), what="no add_material", every=0.01)
        time.sleep(2.0)  # what is tested: the upload still runs past the claim's first period
        answers["second"] = session.post(base_url + publish_url(second))
        publishing.join(timeout=40)
    jobs = [answers[name].json()["publishJobs"][-1] for name in ("first", "second")]
    assert [job["status"] for job in jobs] == ["succeeded", "succeeded"], [job.get("lastError") for job in jobs]
    assert len(fake.requests_to("add_material")) == 1
