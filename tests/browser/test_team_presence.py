"""The team around a task in the browser (docs/api.md §15): what the agent changed since the rejection,
who else has the task open, and a decision refused as stale offering a reload."""

import dataclasses

import pytest
from playwright.sync_api import expect

from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin, login
from tests.helpers.browser import screenshot, sign_in
from tests.helpers.review import (
    article_payload,
    article_selections,
    create_task,
    decision_url,
    locked_except,
    make_asset,
    patch_url,
)

AGENT = {"x-review-agent-token": AGENT_TOKEN}


@pytest.fixture
def admins(live_server):
    """Two reviewers, "alice" and "bob"; a heartbeat every second (REVIEW_PRESENCE_SECONDS=3)."""
    app = live_server.app
    app.extensions["settings"] = dataclasses.replace(app.extensions["settings"], presence_seconds=3)
    for name in ("alice", "bob"):
        create_admin(name)
    return app


@pytest.fixture
def task(admins):
    client = admins.test_client()
    cover = make_asset(admins, 900, 500)
    return create_task(client, AGENT, article_payload([cover["url"]])), cover


def api_client(app, username):
    client = app.test_client()
    login(client, username)
    return client


def second_reviewer(browser, live_server, console):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900}, locale="en-US")
    context.set_default_timeout(10_000)
    opened = context.new_page()
    console.attach(opened)
    return context, opened


def test_the_page_marks_what_the_agent_changed_in_title_and_summary(page, admins, task, console):
    created, cover = task
    alice = api_client(admins, "alice")
    selections = {**article_selections(created, cover), "title": "芯片的未来在哪里", "summary": "一篇关于芯片的短文"}
    rejected = ["title", "summary"]
    assert (
        alice.post(
            decision_url(created),
            json={
                "action": "reject_rework",
                "rejectionReason": "style_mismatch",
                "rejectedElements": rejected,
                "selections": selections,
                "lockedSelections": locked_except(selections, rejected),
            },
        ).status_code
        == 200
    )
    agent = admins.test_client()
    for body in ({"title": "芯片的明天在哪儿"}, {"summary": "一篇讲芯片散热的短文"}):
        assert agent.patch(patch_url(created), json=body, headers=AGENT).status_code == 200

    sign_in(page, f"/review/{created['id']}", username="alice", password=ADMIN_PASSWORD)
    changes = page.locator('[data-role="rework-changes"]')
    expect(changes.get_by_role("heading")).to_have_text("Changed by the agent since the rejection")
    title = changes.locator('[data-change="title"]')
    expect(title.locator("del")).to_have_text(["未来", "里"])
    expect(title.locator("ins")).to_have_text(["明天", "儿"])
    expect(title).to_have_text("芯片的未来明天在哪里儿")
    summary = changes.locator('[data-change="summary"]')
    expect(summary.locator("del")).to_have_text(["关于"])
    expect(summary.locator("ins")).to_have_text(["讲", "散热"])
    # Removed text is struck through, added text underlined: visible without colour.
    assert title.locator("del").first.evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    assert title.locator("ins").first.evaluate("e => getComputedStyle(e).textDecorationLine") == "underline"
    # The same round opens from its rework events in the timeline.
    timeline = page.locator(".timeline")
    timeline.locator("details.event-changes summary").first.click()
    expect(timeline.locator("details[open] ins")).to_have_text(["讲", "散热"])
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the marks wrap, the page does not scroll sideways
    expect(changes.locator('[data-change="summary"] ins').first).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "rework-changes-phone")
    console.assert_clean()


def test_two_reviewers_see_each_other_and_who_is_editing(page, browser, live_server, admins, task, console):
    created, _cover = task
    sign_in(page, f"/review/{created['id']}", username="alice", password=ADMIN_PASSWORD)
    presence = page.locator('[data-role="presence"]')
    expect(presence).to_be_hidden()  # alone on the task

    context, other = second_reviewer(browser, live_server, console)
    try:
        sign_in(other, f"/review/{created['id']}", username="bob", password=ADMIN_PASSWORD)
        expect(other.locator('[data-role="presence"]')).to_have_text("Also open by alice.")
        expect(presence).to_have_text("Also open by bob.")  # alice's next heartbeat
        other.locator("#final-title").fill("鲍勃改的标题")
        expect(presence).to_have_text("Also open by bob (editing).")
    finally:
        context.close()
    # bob's page is closed: past REVIEW_PRESENCE_SECONDS (3 s) alice is alone again; 15 s is a wide margin.
    expect(presence).to_be_hidden(timeout=15_000)
    console.assert_clean()


def test_a_stale_decision_says_who_changed_the_task_and_offers_a_reload(page, admins, task, console):
    console.allow(r"status of 412")
    created, cover = task
    sign_in(page, f"/review/{created['id']}", username="alice", password=ADMIN_PASSWORD)
    bob = api_client(admins, "bob")  # decides first, from another page
    approved = bob.post(
        decision_url(created),
        json={"action": "approve_without_publish", "selections": article_selections(created, cover)},
    )
    assert approved.status_code == 200, approved.get_json()

    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    notice = page.locator("#decision-error")
    expect(notice).to_contain_text("This task was changed after this page was opened; your decision was not saved.")
    expect(notice).to_contain_text("Changed by bob.")
    reload = notice.get_by_role("button", name="Reload the task")
    reload.click()
    expect(page.locator("#task-status")).to_have_text("Approved")  # the current version, shown
    console.assert_clean()
