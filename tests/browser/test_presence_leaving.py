"""Presence ends when the page does (docs/api.md §15): a reviewer who closes the task page is gone from the
other reviewer's page at once, not REVIEW_PRESENCE_SECONDS later (the page's pagehide beacon)."""

from playwright.sync_api import expect

from models import TaskPresence, db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin, login
from tests.helpers.browser import sign_in
from tests.helpers.review import article_payload, create_task
from tests.helpers.waiting import wait_for


def reviewer(browser, live_server, console, username, path):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900}, locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    console.attach(page)
    sign_in(page, path, username=username, password=ADMIN_PASSWORD)
    return context, page


def others_on(client, task):
    answer = client.post(f"/api/review/tasks/{task['id']}/presence", json={"editing": False})
    return [viewer["username"] for viewer in answer.get_json()["viewers"]]


def test_closing_the_page_removes_its_reviewer_at_once(browser, live_server, console):
    app = live_server.app
    assert app.extensions["settings"].presence_seconds == 60  # the default: a heartbeat every 20 s
    for name in ("alice", "bob", "carol"):
        create_admin(name)
    task = create_task(app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload())
    path = f"/review/{task['id']}"
    bob_context, bob = reviewer(browser, live_server, console, "bob", path)
    alice_context, alice = reviewer(browser, live_server, console, "alice", path)
    try:
        presence = alice.locator('[data-role="presence"]')
        expect(presence).to_have_text("Also open by bob.")
        carol = app.test_client()  # a third reviewer's heartbeats, through the API
        login(carol, "carol")
        assert sorted(others_on(carol, task)) == ["alice", "bob"]

        # bob closes his tab: pagehide sends the leave beacon. His browser stays open, as a reviewer's does;
        # closing the whole context could drop the beacon before it leaves (a loaded machine).
        bob.close()
        # A wide margin for a loaded machine; without the beacon bob stays 60 s.
        others = wait_for(lambda: others_on(carol, task), lambda others: "bob" not in others, 15, "bob still on")
        assert others == ["alice"]

        alice.locator("#final-title").fill("爱丽丝改的标题")  # her first edit sends a heartbeat at once
        expect(presence).to_have_text("Also open by carol.")
    finally:
        alice_context.close()
        bob_context.close()
    console.assert_clean()


def open_pages(username):
    """The pages `username` has open on any task, as the store has them (a page that left is not open)."""
    with db.connection_context():
        return TaskPresence.select().where((TaskPresence.username == username) & ~TaskPresence.left).count()


def test_closing_one_of_two_tabs_leaves_the_reviewer_on_through_the_other(browser, live_server, console):
    """bob has the task open in two tabs: he is named once, and closing one leaves him on (each page sends
    its own id); closing the other takes him off."""
    app = live_server.app
    for name in ("bob", "carol"):
        create_admin(name)
    task = create_task(app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload())
    path = f"/review/{task['id']}"
    bob_context, first = reviewer(browser, live_server, console, "bob", path)
    try:
        second = bob_context.new_page()
        console.attach(second)
        second.goto(path)
        wait_for(lambda: open_pages("bob"), lambda count: count == 2, 15, "bob's open pages")
        carol = app.test_client()
        login(carol, "carol")
        assert others_on(carol, task) == ["bob"]  # once, for two pages

        first.close()  # its leave beacon takes that page off; bob stays on through the other
        wait_for(lambda: open_pages("bob"), lambda count: count == 1, 15, "bob's open pages")
        assert others_on(carol, task) == ["bob"]
        second.close()
        others = wait_for(lambda: others_on(carol, task), lambda others: "bob" not in others, 15, "bob still on")
        assert others == []
    finally:
        bob_context.close()
    console.assert_clean()
