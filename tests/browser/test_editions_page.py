"""/editions in Chromium (docs/api.md §21): the draft-ready articles, composing an edition of
three, reordering it with buttons and with Alt+↑/↓, the message as a follower sees it (the headline's cover
large, the others as rows), the quota line, sending now against the fake platform until it is sent with its
counts and links; in both languages at 320 px, 390 px and a desktop width, with no sideways scrolling and
axe-core clean. Screenshots go to tests/output/editions-*.png."""

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from models import db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import (
    DEMO_ADMIN,
    OUTPUT,
    axe_violations,
    screenshot,
    serve_with_workers,
    sideways_overflow,
    sign_in_as,
)
from tests.helpers.editions import published_articles

AGENT = {"x-review-agent-token": AGENT_TOKEN}
VIEWPORTS = {
    "320": {"width": 320, "height": 720},
    "390": {"width": 390, "height": 844},
    "wide": {"width": 1366, "height": 900},
}
WORDS = {
    "zh-CN": {
        "quota": "今天还可群发 1 次",
        "quota_after": "今天还可群发 0 次",
        "headline": "头条",
        "add": "将《{}》加入本次推送",
        "down": "将《{}》下移",
        "up": "将《{}》上移",
        "send": "立即群发",
        "sent": "已群发",
        "delivered": "成功送达",
        "now_headline": "《{}》现在是头条。",
    },
    "en": {
        "quota": "1 send left today",
        "quota_after": "0 sends left today",
        "headline": "Headline",
        "add": "Add “{}” to the edition",
        "down": "Move “{}” down",
        "up": "Move “{}” up",
        "send": "Send now",
        "sent": "Sent",
        "delivered": "Delivered",
        "now_headline": "“{}” is now the headline.",
    },
}


@pytest.fixture
def live_server(make_app):
    """The app with its workers (the edition worker sends), the fake platform pushing its events to it."""
    with serve_with_workers(make_app) as server:
        yield server


@pytest.fixture
def open_at(browser, live_server, console):
    contexts = []

    def make(language, size, timezone="Asia/Shanghai"):
        context = browser.new_context(
            base_url=live_server.url,
            viewport=VIEWPORTS[size],
            locale=language,
            has_touch=size != "wide",
            timezone_id=timezone,
        )
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
    assert page.locator('header nav a[href="/editions"]').count() == 1

    # Three of them, in the order added: the first is the headline.
    first, second, third = listed[:3]
    for task_id in (first, second, third):
        page.get_by_role("button", name=words["add"].format(titles[task_id])).click()
    assert composed(page) == [first, second, third]
    assert page.locator("#edition-items > li").first.locator(".badge.headline").text_content() == words["headline"]
    assert listed[3] in page.eval_on_selector_all("#candidate-items > li", "lis => lis.map(li => li.dataset.taskId)")

    # Reordered with a button, then with the keyboard: the focus stays with the article moved.
    page.get_by_role("button", name=words["down"].format(titles[first])).click()
    assert composed(page) == [second, first, third]
    page.get_by_role("button", name=words["up"].format(titles[third])).focus()
    page.keyboard.press("Alt+ArrowUp")
    page.keyboard.press("Alt+ArrowUp")
    assert composed(page) == [third, second, first]
    assert page.evaluate("() => document.activeElement.closest('li').dataset.taskId") == third
    said = words["now_headline"].format(titles[third])  # said to a screen reader as well
    page.wait_for_function("(said) => document.querySelector('#edition-live').textContent === said", arg=said)
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
        path=str(OUTPUT / f"editions-{language}-{size}-follower-view.png")
    )

    # Send now: saved as composed, scheduled at once, then sent by the worker; WeChat's report brings the
    # counts and each article's link.
    page.get_by_role("button", name=words["send"], exact=True).click()
    page.wait_for_url(re.compile(r"/editions\?account="))
    card = page.locator("#edition-cards > li").first
    card.wait_for()
    editions = client.get("/api/editions?account=silicon-rise").get_json()
    assert editions[0]["taskIds"] == [second, third, first]
    assert editions[0]["status"] in ("scheduled", "sending", "sent")
    page.wait_for_function(
        "() => document.querySelector('#edition-cards > li')?.dataset.status === 'sent'", timeout=20_000
    )
    page.wait_for_function(
        "() => document.querySelector('#edition-cards > li .edition-counts') !== null", timeout=20_000
    )
    page.wait_for_load_state("load")  # the page reloaded with the counts: its script has rendered the lists
    card = page.locator("#edition-cards > li").first
    assert card.locator("[data-role=edition-status]").text_content().strip() == words["sent"]
    assert words["delivered"] in card.text_content()
    links = card.locator("a.article-link")
    assert links.count() == 3 and all(
        links.nth(i).get_attribute("href").startswith("https://mp.weixin.qq.com/") for i in range(3)
    )
    assert words["quota_after"] in page.locator("#quota-left").text_content()
    assert page.get_by_role("button", name=words["send"], exact=True).is_disabled()  # today's send is used
    assert composed(page) == [] and listed[3] in page.eval_on_selector_all(
        "#candidate-items > li", "items => items.map(li => li.dataset.taskId)"
    )
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"editions-{language}-{size}-sent")
    console.assert_clean()


SENDING_WORDS = {
    "zh-CN": {
        "wechat": "你的微信号",
        "preview": "发送预览到我的微信",
        "previewed": "已发送到微信号 {}，请在手机上查看。",
        "unfollowed": "微信公众平台拒绝了这个请求。（平台错误 43004）",
        "tag": "带某个标签的粉丝",
        "tag_option": "早读会员（326 位粉丝）",
        "at": "或定时群发（按你所在时区）",
        "schedule": "定时群发",
        "scheduled": "已定时",
        "cancel": "取消定时群发",
        "to_tag": "带标签「早读会员」的粉丝",
        "canceled": "已取消",
        "save": "保存本次推送",
        "refused": "《{}》不能加入本次推送。请重新载入页面，查看文章的最新状态。",
        "quota": "该公众号在那一天（或那个月）的群发次数已用完，最早可在 {} 群发。",
    },
    "en": {
        "wechat": "Your WeChat ID",
        "preview": "Preview on my WeChat",
        "previewed": "Sent to the WeChat of {}: look at your phone.",
        "unfollowed": "The WeChat platform refused the request.",
        "tag": "Followers with a tag",
        "tag_option": "早读会员 (326 followers)",
        "at": "Or send at a time (your time zone)",
        "schedule": "Schedule",
        "scheduled": "Scheduled",
        "cancel": "Cancel the send",
        "to_tag": "Followers tagged 早读会员",
        "canceled": "Canceled",
        "save": "Save the edition",
        "refused": "“{}” cannot go in this edition: ",
        "quota": "This account's sends for that day or month are used up; the first possible send is at {}.",
    },
}


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_preview_a_tag_a_time_the_quota_and_refusals_in_words_then_cancel(open_at, live_server, console, language):
    words = SENDING_WORDS[language]
    console.allow(r"status of (409|502)")  # the refusals this test provokes
    client = admin_client(live_server.app)
    tasks = published_articles(live_server.app, client, AGENT, 3)
    titles = {task["id"]: task["selections"]["title"] for task in tasks}
    page = open_at(language, "390")
    sign_in_as(page, language, "/editions")
    page.on("dialog", lambda dialog: dialog.accept())
    add = WORDS[language]["add"]

    # An article taken by another edition meanwhile: the save is refused, naming it in the page's words.
    page.get_by_role("button", name=add.format(titles[tasks[0]["id"]])).click()
    taken = client.post("/api/editions", json={"account": "silicon-rise", "taskIds": [tasks[0]["id"]]}).get_json()
    page.get_by_role("button", name=words["save"]).click()
    refusal = page.locator("#edition-saved")
    page.wait_for_function("() => document.querySelector('#edition-saved').classList.contains('error')")
    assert refusal.text_content().startswith(words["refused"].format(titles[tasks[0]["id"]]))
    if language == "zh-CN":
        assert not re.search(r"[A-Za-z]{3,}", refusal.text_content())  # no English on a Chinese page
    assert client.delete(f"/api/editions/{taken['id']}").status_code == 204
    page.reload()

    # Nothing was saved: compose two and preview them on the editor's own WeChat.
    for task in tasks[:2]:
        page.get_by_role("button", name=add.format(titles[task["id"]])).click()
    live_server.platform.unfollowed.add("not_a_follower")
    page.get_by_label(words["wechat"]).fill("not_a_follower")
    page.get_by_role("button", name=words["preview"]).click()
    page.locator("#send-error").wait_for()
    assert page.locator("#send-error").text_content().startswith(words["unfollowed"])
    assert "43004" in page.locator("#send-error").text_content()
    page.get_by_label(words["wechat"]).fill("editor_li")
    page.get_by_role("button", name=words["preview"]).click()
    page.locator("#send-message").wait_for()
    assert page.locator("#send-message").text_content() == words["previewed"].format("editor_li")
    assert live_server.platform.previews[-1]["towxname"] == "editor_li"
    page.reload()
    assert page.get_by_label(words["wechat"]).input_value() == "editor_li"  # remembered in this browser

    # To a tag, at a time: scheduled; a second send that day is past the quota, said with its first free time.
    page.get_by_label(words["tag"]).check()
    page.wait_for_function("() => document.querySelector('#send-tag').options.length > 1")
    page.locator("#send-tag").select_option(label=words["tag_option"])
    tomorrow = (datetime.now(ZoneInfo("Asia/Shanghai")) + timedelta(days=1)).replace(
        hour=8, minute=30, second=0, microsecond=0
    )
    page.get_by_label(words["at"]).fill(tomorrow.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name=words["schedule"], exact=True).click()
    page.wait_for_function("() => document.querySelector('#edition-cards > li')?.dataset.status === 'scheduled'")
    scheduled = client.get("/api/editions?account=silicon-rise").get_json()[0]
    assert scheduled["tagId"] == 100 and scheduled["status"] == "scheduled"
    page.wait_for_function(
        "(name) => document.querySelector('#edition-cards [data-tag-id]').textContent === name", arg=words["to_tag"]
    )  # the tag's name, as the platform gives it
    page.get_by_role("button", name=add.format(titles[tasks[2]["id"]])).click()
    page.get_by_label(words["at"]).fill(tomorrow.replace(hour=20).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name=words["schedule"], exact=True).click()
    page.locator("#send-error").wait_for()
    shown = page.locator("#send-error").text_content()
    assert re.fullmatch(re.escape(words["quota"]).replace(r"\{\}", r"\d{4}-\d\d-\d\d \d\d:\d\d"), shown), shown
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"editions-{language}-390-refused")

    # Cancel the scheduled one.
    card = f'#edition-cards > li[data-edition-id="{scheduled["id"]}"]'
    page.locator(card).get_by_role("button", name=words["cancel"]).click()
    page.wait_for_function(f"() => document.querySelector('{card}')?.dataset.status === 'canceled'")
    page.wait_for_load_state("load")  # the page reloaded after the cancel: its script has rendered the composer
    assert page.locator(f"{card} [data-role=edition-status]").text_content() == words["canceled"]
    # The second edition stays a draft in the composer, with the article the quota refused.
    assert composed(page) == [tasks[2]["id"]]
    assert live_server.platform.sendall_calls == 0
    console.assert_clean()


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_failed_edition_says_why_in_the_pages_language_on_a_narrow_phone(open_at, live_server, console, language):
    from models import Edition
    from rules.ids import now_iso

    client = admin_client(live_server.app)
    tasks = published_articles(live_server.app, client, AGENT, 2)
    with db.connection_context():
        Edition.create(
            edition_id="ed_failed-one",
            account="silicon-rise",
            status="failed",
            task_ids=[task["id"] for task in tasks],
            send_at=now_iso(),
            fail_code="errcode_48001",
            fail_reason="48001",
            created_by=None,
            created_at=now_iso(),
            updated_at=now_iso(),
        )
    page = open_at(language, "320")
    sign_in_as(page, language, "/editions")
    failure = page.locator("[data-role=edition-failure]")
    expected = {
        "zh-CN": "未发送：该公众号无权通过接口群发：只有已认证的公众号可以（平台错误 48001）。",
        "en": "Not sent: the account may not mass send through the API: only verified accounts can "
        "(platform error 48001).",
    }[language]
    assert failure.text_content() == expected
    # A failed edition holds its articles no more: both are draft-ready again, and the page says so where
    # nothing reached a follower (sendall refused it).
    assert len(page.locator("#candidate-items > li").all()) == 2
    assert page.locator("[data-role=edition-next]").count() == 1
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    page.locator(".editions").screenshot(path=str(OUTPUT / f"editions-{language}-320-failed.png"))
    console.assert_clean()
