"""Presence ends when the page does (docs/api.md §15): the task page's leave beacon,
`POST …/presence` `{"editing": false, "leaving": true}`, removes its viewer at once, sent as
navigator.sendBeacon sends it (a Blob of type application/json, or text/plain), under the same
session, permission and same-origin rules as every heartbeat."""

import pytest

from models import TaskPresence, db
from tests.helpers.app import assert_error

pytestmark = pytest.mark.both_stores

LEAVE = b'{"editing": false, "leaving": true}'


def url(task):
    return f"/api/review/tasks/{task['id']}/presence"


def viewers(client, task):
    response = client.post(url(task), json={"editing": False})
    assert response.status_code == 200, response.get_data(as_text=True)
    return [viewer["username"] for viewer in response.get_json()["viewers"]]


@pytest.mark.parametrize("content_type", ["application/json", "text/plain;charset=UTF-8"])
def test_leaving_removes_the_viewer_at_once(admin_client, bob, task, content_type):
    viewers(bob, task)
    assert viewers(admin_client, task) == ["bob"]
    left = bob.post(url(task), data=LEAVE, headers={"Content-Type": content_type, "Origin": "http://localhost"})
    assert left.status_code == 200, left.get_data(as_text=True)
    assert left.get_json() == {
        "viewers": [{"username": "admin", "since": left.get_json()["viewers"][0]["since"], "editing": False}]
    }
    assert viewers(admin_client, task) == []  # well within REVIEW_PRESENCE_SECONDS (60)
    with db.connection_context():
        assert TaskPresence.select().where((TaskPresence.username == "bob") & ~TaskPresence.left).count() == 0


def test_leaving_without_having_come_is_harmless(admin_client, task):
    left = admin_client.post(url(task), json={"editing": False, "leaving": True})
    assert left.status_code == 200 and left.get_json() == {"viewers": []}


def test_a_leave_from_another_site_or_without_a_session_is_refused(app, admin_client, bob, task):
    viewers(bob, task)
    forged = bob.post(url(task), data=LEAVE, headers={"Content-Type": "text/plain", "Origin": "http://evil.example"})
    assert_error(forged, 403, "forbidden")
    assert_error(
        app.test_client().post(url(task), data=LEAVE, headers={"Content-Type": "text/plain"}), 401, "unauthorized"
    )
    assert viewers(admin_client, task) == ["bob"]  # still there


@pytest.mark.parametrize(
    "body", [{"editing": False, "leaving": "yes"}, {"editing": False, "leaving": 1}, {"leaving": True}]
)
def test_leaving_is_a_strict_boolean(admin_client, task, body):
    error = assert_error(admin_client.post(url(task), json=body), 400, "validation_error")
    assert set(error["details"]) <= {"editing", "leaving"} and error["details"]


def test_a_heartbeat_the_page_sent_before_leaving_does_not_bring_it_back(admin_client, bob, task):
    """A heartbeat still on its way when the tab closed reaches the server after the leave beacon (its own
    connection): the page has left, and its admin stays gone."""
    bob.post(url(task), json={"editing": False, "page": "tab-1"})
    assert viewers(admin_client, task) == ["bob"]
    left = bob.post(url(task), data=b'{"editing": false, "leaving": true, "page": "tab-1"}', content_type="text/plain")
    assert left.status_code == 200, left.get_data(as_text=True)
    late = bob.post(url(task), json={"editing": True, "page": "tab-1"})
    assert late.status_code == 200, late.get_data(as_text=True)
    assert viewers(admin_client, task) == []
    bob.post(url(task), json={"editing": False, "page": "tab-2"})  # a page opened anew is a stay of its own
    assert viewers(admin_client, task) == ["bob"]


def test_closing_one_of_two_tabs_leaves_the_other(admin_client, bob, task):
    """An admin with the task open twice is one viewer (since the first, editing on either); leaving one tab
    leaves them on through the other."""
    bob.post(url(task), json={"editing": False, "page": "a"})
    bob.post(url(task), json={"editing": True, "page": "b"})
    listed = admin_client.post(url(task), json={"editing": False}).get_json()["viewers"]
    assert [(viewer["username"], viewer["editing"]) for viewer in listed] == [("bob", True)]
    bob.post(url(task), json={"editing": False, "leaving": True, "page": "b"})
    listed = admin_client.post(url(task), json={"editing": False}).get_json()["viewers"]
    assert [(viewer["username"], viewer["editing"]) for viewer in listed] == [("bob", False)]
    bob.post(url(task), json={"editing": False, "leaving": True, "page": "a"})
    assert viewers(admin_client, task) == []


def test_a_leave_that_names_no_page_ends_every_page_and_leaves_nothing_behind(admin_client, bob, task):
    """The leave of a caller that sends no page (the API's, or a page of an older release) takes the admin
    off however many pages they have open; their next heartbeat without a page brings them back."""
    bob.post(url(task), json={"editing": False, "page": "a"})
    viewers(bob, task)
    bob.post(url(task), json={"editing": False, "leaving": True})
    assert viewers(admin_client, task) == []
    viewers(bob, task)  # another tab without a page id beats on
    assert viewers(admin_client, task) == ["bob"]


@pytest.mark.parametrize("page", ["tab\n", "x" * 65, "天", 7, None])
def test_a_page_id_is_a_short_word(admin_client, task, page):
    error = assert_error(admin_client.post(url(task), json={"editing": False, "page": page}), 400, "validation_error")
    assert set(error["details"]) == {"page"}
    with db.connection_context():
        assert TaskPresence.select().count() == 0


def test_the_unknown_task_is_still_404(admin_client):
    assert_error(
        admin_client.post("/api/review/tasks/nope/presence", json={"editing": False, "leaving": True}), 404, "not_found"
    )
