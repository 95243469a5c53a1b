"""/editions in Chromium (docs/api.md §21, §22 "Pages"): the draft-ready articles, composing an edition of
three, reordering it with buttons and with Alt+↑/↓, the message as a follower sees it (the headline's cover
large, the others as rows), the quota line, sending now against the fake platform until it is sent with its
counts and links; in both languages at 320 px, 390 px and a desktop width, with no sideways scrolling and
axe-core clean. Screenshots go to tests/output/editions-*.png."""
import re
import threading

import pytest
from werkzeug.serving import make_server

from cli.demo import platform_settings, push_events_to, start_fake_platform
from models import db
from services.auth import save_admin
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import (
    DEMO_ADMIN,
    LiveServer,
    QuietHandler,
    axe_violations,
    screenshot,
    sideways_overflow,
    sign_in_as,
)
from tests.helpers.editions import published_articles

AGENT = {"x-review-agent-token": AGENT_TOKEN}
VIEWPORTS = {"320": {"width": 320, "height": 720}, "390": {"width": 390, "height": 844},
             "wide": {"width": 1366, "height": 900}}
WORDS = {"zh-CN": {"quota": "今天还可群发 1 次", "quota_after": "今天还可群发 0 次", "headline": "头条",
                   "add": "将《{}》加入本次推送", "down": "将《{}》下移", "up": "将《{}》上移", "send": "立即群发",
                   "sent": "已群发", "delivered": "成功送达", "open": "打开文章"},
         "en": {"quota": "1 send left today", "quota_after": "0 sends left today", "headline": "Headline",
                "add": "Add “{}” to the edition", "down": "Move “{}” down", "up": "Move “{}” up", "send": "Send now",
                "sent": "Sent", "delivered": "Delivered", "open": "Open the article"}}


@pytest.fixture
def live_server(make_app):
    """The app with its workers (the edition worker sends), the fake platform pushing its events to it."""
    fake, base_url = start_fake_platform()
    fake.publish_seconds = 0.2
    app = make_app(**platform_settings(base_url), WECHAT_LIVE_WORKER_ENABLED=True, WECHAT_PUBLISH_POLL_DELAYS="1")
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    push_events_to(fake, url)
    with db.connection_context():
        save_admin(DEMO_ADMIN, ADMIN_PASSWORD, "review,feedback")
    yield LiveServer(url, app, fake, app.config["REVIEW_UPLOADS_PATH"])
    server.shutdown()
    server.server_close()
    fake.stop()


@pytest.fixture
def open_at(browser, live_server, console):
    contexts = []

    def make(language, size):
        context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS[size], locale=language,
                                      has_touch=size != "wide")
        context.set_default_timeout(10_000)
        context.add_cookies([{"name": "review_lang", "value": language, "url": live_server.url}])
        contexts.append(context)
        opened = context.new_page()
        console.attach(opened)
        return opened

    yield make
    for context in contexts:
        context.close()


def admin_client(app):
    client = app.test_client()
    client.post("/api/auth/login", data={"username": DEMO_ADMIN, "password": ADMIN_PASSWORD})
    return client


def composed(page):
    return page.eval_on_selector_all("#edition-items > li", "items => items.map(li => li.dataset.taskId)")


def follower_view(page):
    """The preview as drawn: the headline's title and box, each row's title and its cover's box."""
    return page.evaluate("""() => {
        const head = document.querySelector('[data-role="edition-preview"] .wx-msg-head');
        const rows = [...document.querySelectorAll('[data-role="edition-preview"] .wx-msg-row')];
        const box = (el) => { const r = el.getBoundingClientRect(); return {width: r.width, height: r.height}; };
        return {head: head && {title: head.textContent.trim(), box: box(head.querySelector('img') || head)},
                rows: rows.map(row => ({title: row.querySelector('.wx-msg-title').textContent.trim(),
                                        cover: box(row.querySelector('img'))})),
                frame: box(document.querySelector('[data-role="edition-preview"]'))};
    }""")


@pytest.mark.parametrize("size", ["320", "390", "wide"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_compose_reorder_preview_and_send_an_edition(open_at, live_server, console, language, size):
    words = WORDS[language]
    client = admin_client(live_server.app)
    tasks = published_articles(live_server.app, client, AGENT, 4)
    titles = {task["id"]: task["selections"]["title"] for task in tasks}
    page = open_at(language, size)
    sign_in_as(page, language, "/editions")
    page.on("dialog", lambda dialog: dialog.accept())

    # The draft-ready articles, newest first; the quota line.
    listed = page.eval_on_selector_all("#candidate-items > li", "items => items.map(li => li.dataset.taskId)")
    assert listed == [task["id"] for task in reversed(tasks)]
    assert words["quota"] in page.locator("#quota-left").text_content()
    nav = page.get_by_role("navigation", name="导航" if language == "zh-CN" else "Sections")
    assert nav.locator('a[href="/editions"]').count() == 1 or page.locator('nav a[href="/editions"]').count() == 1

    # Three of them, in the order added: the first is the headline.
    first, second, third = listed[:3]
    for task_id in (first, second, third):
        page.get_by_role("button", name=words["add"].format(titles[task_id])).click()
    assert composed(page) == [first, second, third]
    assert page.locator("#edition-items > li").first.locator(".badge.headline").text_content() == words["headline"]
    assert listed[3] in page.eval_on_selector_all("#candidate-items > li", "items => items.map(li => li.dataset.taskId)")

    # Reordered with a button, then with the keyboard: the focus stays with the article moved.
    page.get_by_role("button", name=words["down"].format(titles[first])).click()
    assert composed(page) == [second, first, third]
    page.get_by_role("button", name=words["up"].format(titles[third])).focus()
    page.keyboard.press("Alt+ArrowUp")
    page.keyboard.press("Alt+ArrowUp")
    assert composed(page) == [third, second, first]
    assert page.evaluate("() => document.activeElement.closest('li').dataset.taskId") == third
    assert page.locator("#edition-live").text_content() != ""  # said to a screen reader as well
    page.keyboard.press("Alt+ArrowDown")
    assert composed(page) == [second, third, first]

    # The follower's view: the headline's cover across the message with its title over it, the others as rows
    # with small square covers.
    view = follower_view(page)
    assert view["frame"]["width"] <= 377
    assert view["head"]["title"] == titles[second]
    assert view["head"]["box"]["width"] >= view["frame"]["width"] - 30 and view["head"]["box"]["height"] > 90
    assert [row["title"] for row in view["rows"]] == [titles[third], titles[first]]
    for row in view["rows"]:
        assert 40 <= row["cover"]["width"] == row["cover"]["height"] <= 60

    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"editions-{language}-{size}-composed")
    page.locator('[data-role="edition-preview"]').screenshot(
        path=str(screenshot.__globals__["OUTPUT"] / f"editions-{language}-{size}-follower-view.png"))

    # Send now: saved as composed, scheduled at once, then sent by the worker; WeChat's report brings the
    # counts and each article's link.
    page.get_by_role("button", name=words["send"], exact=True).click()
    page.wait_for_url(re.compile(r"/editions\?account="))
    card = page.locator("#edition-cards > li").first
    card.wait_for()
    editions = client.get("/api/editions?account=silicon-rise").get_json()
    assert editions[0]["taskIds"] == [second, third, first]
    assert editions[0]["status"] in ("scheduled", "sending", "sent")
    page.wait_for_function("() => document.querySelector('#edition-cards > li')?.dataset.status === 'sent'",
                           timeout=20_000)
    page.wait_for_function("() => document.querySelector('#edition-cards > li .edition-counts') !== null",
                           timeout=20_000)
    card = page.locator("#edition-cards > li").first
    assert card.locator("[data-role=edition-status]").text_content().strip() == words["sent"]
    assert words["delivered"] in card.text_content()
    links = card.locator("a.article-link")
    assert links.count() == 3 and all(
        links.nth(i).get_attribute("href").startswith("https://mp.weixin.qq.com/") for i in range(3))
    assert words["quota_after"] in page.locator("#quota-left").text_content()
    assert composed(page) == [] and listed[3] in page.eval_on_selector_all(
        "#candidate-items > li", "items => items.map(li => li.dataset.taskId)")
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"editions-{language}-{size}-sent")
    console.assert_clean()
