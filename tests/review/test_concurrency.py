"""Concurrent writes on one task through a real threaded HTTP server: one wins, the other is refused."""

import threading

import pytest
import requests

from models import ReviewTask, db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin
from tests.helpers.review import approve_article, article_payload, decision_url, live_server, make_asset, patch_url

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
ROUNDS = 6


@pytest.fixture
def server(app):
    create_admin()
    with live_server(app) as base:
        admin = requests.Session()
        response = admin.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": ADMIN_PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert response.status_code == 303 and "review_admin_session" in admin.cookies
        yield base, admin


def at_once(*calls):
    """Run the calls in threads released together; returns their responses in order."""
    barrier, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(index, call):
        barrier.wait(timeout=10)
        results[index] = call()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def new_task(base):
    response = requests.post(f"{base}/api/review/agent/tasks", json=article_payload(), headers=AGENT, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


def test_patch_and_decision_with_if_match_one_wins(app, server):
    base, admin = server
    cover = make_asset(app)
    for _ in range(ROUNDS):
        task = new_task(base)
        decision = approve_article(task, cover)
        patch, decided = at_once(
            lambda t=task: requests.patch(
                base + patch_url(t), json={"title": "智能体的标题"}, headers={**AGENT, "If-Match": '"1"'}, timeout=10
            ),
            lambda t=task, d=decision: admin.post(
                base + decision_url(t), json=d, headers={"If-Match": '"1"'}, timeout=10
            ),
        )
        codes = sorted([patch.status_code, decided.status_code])
        assert codes[0] == 200 and codes[1] in (409, 412), (patch.text, decided.text)
        stored = admin.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()
        assert stored["version"] == 2
        kinds = [event["type"] for event in stored["timeline"]]
        if decided.status_code == 200:
            assert stored["status"] == "approved" and stored["selections"] == decision["selections"]
            assert kinds == ["task_created", "approved"]
        else:
            assert stored["status"] == "pending_review" and stored["selections"] == {"title": "智能体的标题"}
            assert kinds == ["task_created", "draft_saved"]
        assert stored == (decided if decided.status_code == 200 else patch).json()


def test_patch_and_decision_without_if_match_stay_consistent(app, server):
    base, admin = server
    cover = make_asset(app)
    for _ in range(ROUNDS):
        task = new_task(base)
        patch, decided = at_once(
            lambda t=task: requests.patch(
                base + patch_url(t), json={"summary": "智能体的摘要"}, headers=AGENT, timeout=10
            ),
            lambda t=task: admin.post(base + decision_url(t), json=approve_article(t, cover), timeout=10),
        )
        assert decided.status_code == 200, decided.text
        stored = admin.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()
        kinds = [event["type"] for event in stored["timeline"]]
        assert stored["status"] == "approved"
        if patch.status_code == 200:  # the PATCH landed first; the decision then replaced selections
            assert kinds == ["task_created", "draft_saved", "approved"] and stored["version"] == 3
        else:
            assert patch.status_code == 409 and patch.json()["error"]["code"] == "invalid_state"
            assert kinds == ["task_created", "approved"] and stored["version"] == 2
        assert stored["selections"]["summary"] == approve_article(task, cover)["selections"]["summary"]


def test_same_idempotency_key_at_once_creates_one_task(server):
    base, _admin = server
    headers = {**AGENT, "Idempotency-Key": "burst-1"}
    responses = at_once(
        *[
            (
                lambda: requests.post(
                    f"{base}/api/review/agent/tasks", json=article_payload(), headers=headers, timeout=10
                )
            )
            for _ in range(5)
        ]
    )
    assert [r.status_code for r in responses] == [201] * 5
    assert len({r.json()["id"] for r in responses}) == 1
    assert sorted(r.headers.get("Idempotent-Replayed", "no") for r in responses) == ["no"] + ["true"] * 4
    with db.connection_context():
        assert ReviewTask.select().count() == 1


@pytest.mark.parametrize("route", ["decision", "patch"])
def test_a_write_answers_with_its_own_version_not_a_later_requests_events(
    app, client, admin_client, agent_headers, monkeypatch, route
):
    """Another request's write landing right after this one's commit is not in this one's answer: the
    body is the task at the version its ETag names (a reply once ended its timeline with a later rejection)."""
    from blueprints import agent, review
    from services.review.timeline import add_event

    cover = make_asset(app, 900, 500)
    task = client.post("/api/review/agent/tasks", json=article_payload([cover["url"]]), headers=agent_headers)
    task = task.get_json()
    module, name = (review.review, "decide") if route == "decision" else (agent.review, "patch_elements")
    write = getattr(module, name)

    def then_another_write(*args, **kwargs):
        answer = write(*args, **kwargs)
        with db.connection_context(), db.atomic():  # what another request commits right after
            row = ReviewTask.get(ReviewTask.task_id == task["id"])
            add_event(row, "draft_saved", "agent", None, {"fields": ["title"]})
            row.version += 1
            row.save()
        return answer

    monkeypatch.setattr(module, name, then_another_write)
    if route == "decision":
        response = admin_client.post(decision_url(task), json=approve_article(task, cover))
    else:
        response = client.patch(patch_url(task), json={"title": "A new title"}, headers=agent_headers)

    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert response.headers["ETag"] == '"2"' and body["version"] == 2
    assert [event["type"] for event in body["timeline"]][-1] == ("approved" if route == "decision" else "draft_saved")
    assert len(body["timeline"]) == 2
