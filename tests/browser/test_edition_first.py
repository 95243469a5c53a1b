"""The task page after publishing leads to the day's edition first (docs/api.md §18 "Pages", §21), in
Chromium, in both languages, on a desk and a phone: adding the article to the account's edition goes on to
the Send to followers page; publishing alone is the second action and says that followers are not notified
and that the article then joins no edition. The decision panel keeps the draft's media id out of its way,
and a live task shows 已发表 alone."""

import pytest
from playwright.sync_api import expect

from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import (
    DEMO_ADMIN,
    axe_violations,
    screenshot,
    serve_with_workers,
    sideways_overflow,
    sign_in_as,
)
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset
from tests.helpers.waiting import wait_until

AGENT = {"x-review-agent-token": AGENT_TOKEN}

WORDS = {
    "zh-CN": {
        "publish": "生成微信草稿",
        "published": "已生成微信草稿。",
        "add": "用它开始今天的推送",
        "add_more": "加入今天的推送（已有 1 篇）",
        "open": "打开推送",
        "now": "立即发表给读者",
        "alone": ("不会通知粉丝", "不能再加入推送"),
        "holding": "这篇文章已在一次推送中",
        "in_edition": "已加入今天的推送",
        "quota": "今天还可群发 1 次",
        "draft": "草稿已就绪",
        "live": "已发表",
    },
    "en": {
        "publish": "Publish to WeChat drafts",
        "published": "Published as WeChat draft.",
        "add": "Start today's edition with it",
        "add_more": "Add to today's edition (1 article so far)",
        "open": "Open Send to followers",
        "now": "Publish to readers now",
        "alone": ("followers are not notified", "can no longer join an edition"),
        "holding": "This article is in an edition",
        "in_edition": "is in today's edition",
        "quota": "1 send left today",
        "draft": "Draft ready",
        "live": "Live",
    },
}

# Each visible element of the decision panel that reaches past the panel's right edge, or whose own content
# is wider than its box (a long unbroken word such as a media id): "tag#id: how many px".
PANEL_OVERFLOW = """() => {
    const panel = document.querySelector('.decision-inner');
    const right = panel.getBoundingClientRect().right;
    return [...panel.querySelectorAll('*')].filter((el) => el.checkVisibility())
        .map((el) => [el, Math.max(el.getBoundingClientRect().right - right, el.scrollWidth - el.clientWidth)])
        .filter(([el, past]) => past > 1 && getComputedStyle(el).overflowX === 'visible')
        .map(([el, past]) => `${el.tagName}#${el.id}.${el.className}: ${past}`);
}"""


@pytest.fixture
def live_server(make_app):
    """The app with its workers (going live, editions), the fake platform pushing its events to it."""
    with serve_with_workers(make_app) as server:
        yield server


def approved(live_server, topic):
    """An article approved without publishing, and a signed-in test client."""
    app = live_server.app
    client = app.test_client()
    client.post("/api/auth/login", data={"username": DEMO_ADMIN, "password": ADMIN_PASSWORD})
    cover = make_asset(app, 900, 500)
    task = create_task(client, AGENT, article_payload([cover["url"]], topic=topic))
    answer = client.post(decision_url(task), json=approve_article(task, cover))
    assert answer.get_json()["status"] == "approved", answer.get_json()
    return task, client


def published(live_server, topic):
    task, client = approved(live_server, topic)
    answer = client.post(f"/api/review/tasks/{task['id']}/publish-jobs", headers={"If-Match": "*"})
    assert answer.get_json()["status"] == "published", answer.get_json()
    return task, client


@pytest.mark.parametrize("size", ["wide", "phone"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_after_publishing_the_page_leads_to_the_days_edition_first(open_page, live_server, console, language, size):
    words = WORDS[language]
    task, client = approved(live_server, f"群发优先 {language} {size}")
    page = open_page(language, size)
    sign_in_as(page, language, f"/review/{task['id']}")
    page.get_by_role("button", name=words["publish"]).click()
    expect(page.locator("#page-message")).to_contain_text(words["published"].rstrip("。."), timeout=20_000)
    # The draft's media id means nothing to an editor: nothing in the panel reaches past its edge, and the
    # message does not carry it.
    assert page.evaluate(PANEL_OVERFLOW) == []
    expect(page.locator("#page-message")).to_have_text(words["published"])
    # The day's edition first, the only primary action; publishing alone comes after, saying what it does not do.
    add = page.locator("#edition-add")
    expect(add).to_have_text(words["add"])
    expect(add).to_have_class("primary")
    # Publishing alone is folded: a deliberate second step, and on a phone the docked bar leaves the article
    # most of the screen (it took 470 px of 844 unfolded).
    expect(page.locator("#live-now")).to_be_hidden()
    panel = page.locator(".decision-panel").bounding_box()
    if size == "phone":
        assert panel["height"] < 0.4 * page.viewport_size["height"], panel
    screenshot(page, f"edition-first-folded-{language}-{size}")
    page.locator("#live-alone > summary").click()
    now = page.get_by_role("button", name=words["now"])
    expect(now).to_be_visible()
    assert "primary" not in (now.get_attribute("class") or "")
    hint = page.locator("#live-alone-hint").text_content()
    assert all(word in hint for word in words["alone"]), hint
    assert now.get_attribute("aria-describedby") == "live-alone-hint"
    box = lambda locator: locator.bounding_box()  # noqa: E731 - one measure, read twice
    assert box(add)["y"] < box(now)["y"], "the edition comes before publishing alone"
    link = page.get_by_role("link", name=words["open"])
    assert link.get_attribute("href") == "/editions?account=silicon-rise"
    expect(page.locator("#edition-quota")).to_have_text(words["quota"])
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"edition-first-{language}-{size}")
    # Adding it makes (or joins) the account's draft edition through /api/editions and opens the page to send it.
    add.click()
    page.wait_for_url("**/editions?account=silicon-rise&edition=*")
    expect(page.locator("#page-message")).to_contain_text(words["in_edition"])
    [edition] = client.get("/api/editions?account=silicon-rise&status=draft").get_json()
    assert edition["taskIds"] == [task["id"]]
    expect(page.locator("#edition-items > li")).to_have_count(1)
    assert sideways_overflow(page) <= 0
    screenshot(page, f"edition-first-composer-{language}-{size}")
    # Back on the task: it is in the edition, so publishing alone is not offered; the way to the edition is.
    page.goto(f"/review/{task['id']}")
    expect(page.locator("#edition-holding")).to_contain_text(words["holding"])
    assert page.get_by_role("link", name=words["open"]).get_attribute("href") == (
        f"/editions?account=silicon-rise&edition={edition['id']}"
    )
    expect(page.get_by_role("button", name=words["now"])).to_have_count(0)
    # A second article joins the same edition: the button says how many it holds already.
    other, _client = published(live_server, f"第二篇 {language} {size}")
    page.goto(f"/review/{other['id']}")
    expect(page.locator("#edition-add")).to_have_text(words["add_more"])
    page.locator("#edition-add").click()
    page.wait_for_url(f"**/editions?account=silicon-rise&edition={edition['id']}")
    assert client.get(f"/api/editions/{edition['id']}").get_json()["taskIds"] == [task["id"], other["id"]]
    console.assert_clean()


@pytest.mark.parametrize("size", ["wide", "phone"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_live_task_shows_live_alone_in_the_decision_panel(open_page, live_server, console, language, size):
    words = WORDS[language]
    task, client = published(live_server, f"已发表 {language} {size}")
    assert client.post(f"/api/review/tasks/{task['id']}/go-live", json={}).status_code == 202
    wait_until(
        lambda: (client.get(f"/api/review/tasks/{task['id']}").get_json()["live"] or {}).get("status") == "live",
        30,
        "the article did not go live",
    )
    page = open_page(language, size)
    sign_in_as(page, language, f"/review/{task['id']}")
    expect(page.locator("#live-status")).to_have_text(words["live"])
    panel = page.locator(".decision-panel")
    assert words["draft"] not in panel.inner_text()  # docs/api.md §18: 已发表 alone, never 草稿已就绪 beside it
    expect(page.locator("#task-status")).to_have_text(words["live"])
    assert page.evaluate(PANEL_OVERFLOW) == []
    assert sideways_overflow(page) <= 0
    screenshot(page, f"live-alone-{language}-{size}")
    console.assert_clean()
