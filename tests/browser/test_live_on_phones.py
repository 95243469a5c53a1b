"""The task page's readers' part and timeline on a phone, in Chromium, in both languages (docs/api.md §14,
§18, §19): the timeline tells who sent what to readers in the page's words, the daily figures keep their
numbers and dates whole at 320-390 px, the top bar takes two rows at most, one date format per language,
and a refused schedule says why."""

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import (
    DEMO_ADMIN,
    OUTPUT,
    axe_violations,
    serve_with_workers,
    sideways_overflow,
    sign_in_as,
)
from tests.helpers.publishing import went_live_days_ago
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset

AGENT = {"x-review-agent-token": AGENT_TOKEN}
NAMED = "silicon-rise=硅基崛起,carbon-fitness=碳基健身"


@pytest.fixture
def live_server(make_app):
    """The app with its live worker, the fake platform pushing publish events to it; accounts named."""
    with serve_with_workers(make_app, WECHAT_ACCOUNTS=NAMED) as server:
        yield server


def published(live_server, topic):
    app = live_server.app
    client = app.test_client()
    client.post("/api/auth/login", data={"username": DEMO_ADMIN, "password": ADMIN_PASSWORD})
    cover = make_asset(app, 900, 500)
    task = create_task(client, AGENT, article_payload([cover["url"]], topic=topic))
    answer = client.post(decision_url(task), json=approve_article(task, cover, action="approve_and_publish"))
    assert answer.get_json()["status"] == "published", answer.get_json()
    return task, client


WORDS = {
    "zh-CN": {
        "now": "立即发表给读者",
        "live": "已发表",
        "api": "接口文档",
        "schedule": "定时发表",
        "scheduled": "已请求发表给读者",
        "submitted": "已提交微信发表",
        "published": "已发表给读者",
        "by": "操作人：demo",
        "past": "这个时间已经过去：请选一个将来的时间，或者立即发表。",
        "ahead": "这个时间在 30 天以后：请选 30 天以内的时间。",
        "figures": "每日明细",
    },
    "en": {
        "now": "Publish to readers now",
        "live": "Live",
        "api": "API",
        "schedule": "Schedule",
        "scheduled": "Publishing to readers requested",
        "submitted": "Submitted to WeChat for readers",
        "published": "Published to readers",
        "by": "by demo",
        "past": "This time has passed: choose a time ahead, or publish now.",
        "ahead": "This time is more than 30 days ahead: choose a time within 30 days.",
        "figures": "Figures per day",
    },
}

# Texts that are split over lines inside one cell (a number or a date broken mid-token).
SPLIT_CELLS = """() => [...document.querySelectorAll('table.figures th, table.figures td')].filter((cell) => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
    return lines.size > 1;
}).map((cell) => cell.textContent)"""
# The rows of text the top bar takes: a link or button below the bottom of the row before starts another.
TOPBAR_ROWS = """() => {
    const boxes = [...document.querySelectorAll('header.topbar a, header.topbar button')]
        .filter((el) => el.offsetParent).map((el) => el.getBoundingClientRect()).sort((a, b) => a.top - b.top);
    let rows = 0, bottom = -Infinity;
    for (const box of boxes) {
        if (box.top >= bottom - 1) { rows += 1; bottom = box.bottom; } else bottom = Math.max(bottom, box.bottom);
    }
    return rows;
}"""
# Every date or time the page shows as text, outside the article being reviewed.
DATES = r"\d{4}[-/年.]\d{1,2}[-/月.]\d{1,2}日?(?:[ T,]+\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}/\d{1,2}/\d{4}|\b\d{2}-\d{2}\b"
# The text a person sees in the page's main part, the article under review (its drafts, the preview's body and
# the editor) aside.
SHOWN_TEXT = """() => {
    const skip = '.rendered, .wx-body, textarea, script, template, .time-hint';
    const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
    const out = [];
    while (walker.nextNode()) {
        const holder = walker.currentNode.parentElement;
        if (!holder.closest(skip) && holder.checkVisibility()) out.push(walker.currentNode.textContent);
    }
    return out.join(' ');
}"""
ONE_FORMAT = re.compile(r"^\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?$")


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_the_readers_part_and_the_timeline_on_a_phone(open_page, live_server, console, language):
    words = WORDS[language]
    task, client = published(live_server, f"发给读者 {language}")
    page = open_page(language, "phone")
    sign_in_as(page, language, f"/review/{task['id']}")
    page.on("dialog", lambda dialog: dialog.accept())
    assert page.evaluate(TOPBAR_ROWS) <= 2
    assert page.locator("header.topbar nav a[href='/api/docs']").text_content() == words["api"]
    page.locator("#live-alone > summary").click()  # publishing alone is folded under the edition
    page.get_by_role("button", name=words["now"]).click()
    page.wait_for_function(
        f"() => document.querySelector('#live-status')?.textContent.trim() === {words['live']!r}", timeout=20_000
    )
    assert page.locator("#task-status").text_content() == words["live"]  # one badge, not the draft's beside it
    went_live_days_ago(task["id"], 4, live_server.platform)
    runner = live_server.app.test_cli_runner()
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
    for back in (3, 2, 1):
        assert runner.invoke(args=["fetch-stats", "--date", (today - timedelta(days=back)).isoformat()]).exit_code == 0
    page.reload()
    page.get_by_text(words["figures"], exact=True).click()
    timeline = page.locator("ol.timeline")
    assert words["scheduled"] in timeline.locator('li[data-event="live_scheduled"]').text_content()
    assert words["by"] in timeline.locator('li[data-event="live_scheduled"]').text_content()
    assert words["submitted"] in timeline.locator('li[data-event="live_submitted"]').text_content()
    link = timeline.locator('li[data-event="live"] a')
    assert words["published"] in timeline.locator('li[data-event="live"]').text_content()
    assert link.get_attribute("href").startswith("https://mp.weixin.qq.com/s?__biz=")
    # One date format in the whole page (the article under review aside): the table's days, the chart's,
    # the times of the timeline and the head.
    shown = page.evaluate(SHOWN_TEXT)
    dates = re.findall(DATES, shown)
    assert dates and [d for d in dates if not ONE_FORMAT.match(d)] == []
    for width in (320, 360, 390):
        page.set_viewport_size({"width": width, "height": 844})
        assert page.evaluate(SPLIT_CELLS) == [], width
        assert sideways_overflow(page) <= 0, width
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate(TOPBAR_ROWS) <= 2
    assert axe_violations(page) == []
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.locator("section.reads").screenshot(path=str(OUTPUT / f"live-reads-{language}-390.png"))
    page.locator("#live-panel").screenshot(path=str(OUTPUT / f"live-panel-{language}-390.png"))
    page.locator("section[aria-labelledby='timeline-heading']").screenshot(
        path=str(OUTPUT / f"live-timeline-{language}-390.png")
    )
    page.locator("header.topbar").screenshot(path=str(OUTPUT / f"live-topbar-{language}-390.png"))
    console.assert_clean()


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_refused_schedule_says_why_in_the_pages_language(open_page, live_server, console, language):
    console.allow(r"status of 400")
    words = WORDS[language]
    task, client = published(live_server, f"定时 {language}")
    page = open_page(language, "phone", timezone="Asia/Shanghai")
    sign_in_as(page, language, f"/review/{task['id']}")
    page.locator("#live-alone > summary").click()  # publishing alone is folded under the edition
    field = page.locator("#live-at")
    now = datetime.now(ZoneInfo("Asia/Shanghai")).replace(second=0, microsecond=0)
    low, high = datetime.fromisoformat(field.get_attribute("min")), datetime.fromisoformat(field.get_attribute("max"))
    assert abs(low - now.replace(tzinfo=None)) <= timedelta(minutes=2)
    assert abs(high - (now + timedelta(days=30)).replace(tzinfo=None)) <= timedelta(minutes=2)
    for at, reason in ((now - timedelta(hours=2), words["past"]), (now + timedelta(days=31), words["ahead"])):
        field.fill(at.strftime("%Y-%m-%dT%H:%M"))
        page.get_by_role("button", name=words["schedule"], exact=True).click()
        error = page.locator("#err-at")
        error.wait_for()
        assert error.text_content() == reason
        assert field.get_attribute("aria-invalid") == "true"
    page.locator("#live-panel").screenshot(path=str(OUTPUT / f"live-schedule-refused-{language}-390.png"))
    assert client.get(f"/api/review/tasks/{task['id']}").get_json()["live"] is None
    console.assert_clean()
