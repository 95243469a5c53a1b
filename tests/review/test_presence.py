"""Who else has a task open (docs/api.md §15 Presence): POST /api/review/tasks/<taskId>/presence."""

from datetime import timedelta

import pytest

from models import TaskPresence, db
from rules.ids import utcnow
from services.review.presence import heartbeat
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.review import article_payload, create_task

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def url(task):
    return f"/api/review/tasks/{task['id']}/presence"


def beat(client, task, editing=False):
    response = client.post(url(task), json={"editing": editing})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["viewers"]


def test_two_admins_each_see_the_other_never_themselves(admin_client, bob, task):
    assert beat(admin_client, task) == []
    seen_by_admin_before = beat(bob, task, editing=True)
    assert [(v["username"], v["editing"]) for v in seen_by_admin_before] == [("admin", False)]
    seen = beat(admin_client, task)
    assert [(v["username"], v["editing"]) for v in seen] == [("bob", True)]
    assert seen[0]["since"].endswith("Z")
    # The editing flag follows the latest call; `since` stays for a continuous stay.
    assert beat(bob, task, editing=False)[0]["username"] == "admin"
    again = beat(admin_client, task)
    assert again == [{"username": "bob", "since": seen[0]["since"], "editing": False}]


def test_presence_is_per_task(app, admin_client, bob, task, client, agent_headers):
    other_task = create_task(client, agent_headers, article_payload(topic="另一个选题"))
    beat(bob, other_task)
    assert beat(admin_client, task) == []


def test_a_heartbeat_older_than_the_setting_no_longer_counts(app, task):
    """The service takes `now`: the clock is moved instead of waiting a minute."""
    settings = app.extensions["settings"]
    assert settings.presence_seconds == 60
    start = utcnow()
    with db.connection_context():
        heartbeat(task["id"], "bob", True, settings, now=start)
        assert [
            v["username"] for v in heartbeat(task["id"], "admin", False, settings, now=start + timedelta(seconds=59))
        ] == ["bob"]
        assert heartbeat(task["id"], "admin", False, settings, now=start + timedelta(seconds=60)) == []
        # The expired row was pruned on that write; bob coming back starts a new stay.
        assert TaskPresence.select().where(TaskPresence.username == "bob").count() == 0
        later = start + timedelta(seconds=61)
        heartbeat(task["id"], "bob", False, settings, now=later)
        viewers = heartbeat(task["id"], "admin", False, settings, now=later)
        assert [v["since"] for v in viewers] == [later.isoformat(timespec="milliseconds").replace("+00:00", "Z")]


def test_a_shorter_setting_expires_sooner(make_app, task):
    app = make_app(REVIEW_PRESENCE_SECONDS=5)
    settings = app.extensions["settings"]
    start = utcnow()
    with db.connection_context():
        heartbeat(task["id"], "bob", False, settings, now=start)
        assert heartbeat(task["id"], "admin", False, settings, now=start + timedelta(seconds=4))
        assert heartbeat(task["id"], "admin", False, settings, now=start + timedelta(seconds=5)) == []


def test_unknown_task_is_404_and_the_agent_token_is_401(app, admin_client, agent_headers, task):
    assert_error(admin_client.post("/api/review/tasks/nope/presence", json={"editing": False}), 404, "not_found")
    assert_error(app.test_client().post(url(task), json={"editing": False}, headers=agent_headers), 401, "unauthorized")
    assert_error(app.test_client().post(url(task), json={"editing": False}), 401, "unauthorized")


def test_feedback_only_admins_are_refused(app, task):
    create_admin("triage", permissions="feedback")
    triage = app.test_client()
    login(triage, "triage")
    assert_error(triage.post(url(task), json={"editing": False}), 403, "forbidden")


@pytest.mark.parametrize("body", [{}, {"editing": "yes"}, {"editing": 1}, {"editing": True, "extra": 1}])
def test_the_body_is_checked_and_nothing_is_recorded(admin_client, task, body):
    error = assert_error(admin_client.post(url(task), json=body), 400, "validation_error")
    assert set(error["details"]) <= {"editing", "extra"} and error["details"]
    with db.connection_context():
        assert TaskPresence.select().count() == 0


def test_deleting_the_task_removes_its_presence(admin_client, bob, task):
    beat(bob, task, editing=True)
    beat(admin_client, task)
    response = admin_client.delete(f"/api/review/tasks/{task['id']}")
    assert response.status_code == 200, response.get_json()
    with db.connection_context():
        assert TaskPresence.select().where(TaskPresence.task_id == task["id"]).count() == 0


def test_the_route_is_in_the_openapi_document(client):
    document = client.get("/api/openapi.json").get_json()
    operation = document["paths"]["/api/review/tasks/{task_id}/presence"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/Presence"}
    assert document["components"]["schemas"]["Presence"]["required"] == ["editing"]
    assert {"200", "400", "401", "404"} <= set(operation["responses"])
