"""The reviewer's workspace in Chromium (docs/api.md §14), part one: the pages' language and times.

- every page in the language asked for, codes as words, no English left on a Chinese page, the switch;
- times in the browser's own zone, relative hints, and the list's date filters in the viewer's days.
"""

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in_as, task_by_topic

WORDS = {  # a few words each page must show in its language
    "zh-CN": {
        "list": ["审核任务", "待审核", "图文文章", "图片消息", "筛选"],
        "task": ["通过并生成草稿", "仅通过", "退回修改", "提交决定", "审核决定", "时间线"],
        "article": ["微信中的效果", "排版主题", "正文配图"],
        "post": ["封面裁剪（3:4）", "开启留言"],
        "feedback_list": ["用户反馈", "故障", "建议", "处理中", "已处理"],
        "feedback": ["保存状态", "附件"],
    },
    "en": {
        "list": ["Review tasks", "Pending review", "Article", "Image post", "Apply filters"],
        "task": [
            "Approve and publish",
            "Approve without publishing",
            "Reject for rework",
            "Submit decision",
            "Decision",
            "Timeline",
        ],
        "article": ["As WeChat will show it", "Theme", "Body images"],
        "post": ["Cover crop (3:4)", "Open comments"],
        "feedback_list": ["Feedback", "Bug", "Suggestion", "Processing", "Processed"],
        "feedback": ["Save status", "Attachments"],
    },
}
CODES = ["pending_review", "image_post", "approve_and_publish", "task_created", "unprocessed", "commentSettings"]

# Page text outside content and code: text nodes not inside the article renderings, code, logs or an
# element marked lang="en" (the API's own English messages).
PAGE_TEXT = """() => {
    const skip = 'script, style, textarea, code, pre, kbd, time, [lang="en"], .rendered, .wx-frame, .tags, .outline, '
               + '.choices, .prewrap, .facts dd, .diff, table.list td:first-child';
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const out = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || parent.closest(skip) || !node.textContent.trim()) continue;
        out.push(node.textContent.trim());
    }
    document.querySelectorAll('[aria-label], [title], [placeholder]').forEach((el) => {
        if (!el.closest(skip)) out.push(el.getAttribute('aria-label') || el.getAttribute('title') || el.placeholder);
    });
    return out;
}"""
ENGLISH_PHRASE = re.compile(r"[A-Za-z]{2,}(?:[,.:;'’]?\s+[A-Za-z]{2,})+")  # words apart: file names are content
ALLOWED = {"silicon-rise", "carbon-fitness", "English"}  # account ids (content) and the switch's own name


def english_left(page):
    """Phrases of two or more English words on a Chinese page: a string that was not translated."""
    return sorted(
        {match for text in page.evaluate(PAGE_TEXT) for match in ENGLISH_PHRASE.findall(text) if match not in ALLOWED}
    )


@pytest.mark.parametrize("size", ["wide", "phone"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_every_page_speaks_the_language_asked_for(open_page, demo, console, language, size):
    page = open_page(language, size)
    page.goto("/login")
    assert page.evaluate("document.documentElement.lang") == language
    if language == "zh-CN":
        assert english_left(page) == [], "login"
    sign_in_as(page, language, "/review?status=all")
    console.allow(r"status of 404")
    page.goto("/review/no-such-task")  # an error page
    back = "返回审核列表" if language == "zh-CN" else "Back to the review list"
    expect(page.get_by_role("link", name=back)).to_be_visible()
    if language == "zh-CN":
        assert english_left(page) == [], "error page"
    article = task_by_topic(demo, "芯片的下一个十年")
    feedback = demo["feedback"][0]
    post = task_by_topic(demo, "一周力量训练打卡")
    for kinds, path in [
        (["list"], "/review?status=all"),
        (["task", "article"], f"/review/{article['id']}"),
        (["task", "post"], f"/review/{post['id']}"),
        (["feedback_list"], "/feedback"),
        (["feedback"], f"/feedback/{feedback['id']}"),
    ]:
        page.goto(path)
        assert page.evaluate("document.documentElement.lang") == language, path
        text = page.locator("body").inner_text()
        wanted = [word for kind in kinds for word in WORDS[language][kind]]
        assert [word for word in wanted if word not in text] == [], path
        assert [code for code in CODES if code in text] == [], path
        if language == "zh-CN":
            assert english_left(page) == [], path
    console.assert_clean()


def test_the_switch_changes_the_language_of_every_page_for_a_year(open_page, demo, console):
    page = open_page("zh-CN", "phone")
    sign_in_as(page, "zh-CN", "/feedback")
    page.get_by_role("button", name="English").click()
    page.wait_for_url("**/feedback")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", level=1)).to_have_text("Feedback")
    assert page.get_by_role("button", name="English").get_attribute("aria-pressed") == "true"
    [cookie] = [c for c in page.context.cookies() if c["name"] == "review_lang"]
    assert cookie["value"] == "en" and cookie["expires"] - datetime.now(UTC).timestamp() > 364 * 86400
    page.goto("/review")
    expect(page.get_by_role("heading", level=1)).to_have_text("Review tasks")
    page.get_by_role("button", name="中文").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("审核任务")
    console.assert_clean()


def local(value, zone):
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


@pytest.mark.parametrize(("language", "size", "hint"), [("zh-CN", "phone", "前"), ("en", "wide", "ago")])
def test_times_are_the_browsers_own_with_a_relative_hint(open_page, demo, live_server, console, language, size, hint):
    page = open_page(language, size, timezone="America/New_York")
    sign_in_as(page, language, "/review?status=all")
    # The server's text: the zone the browser told it (review_tz), as the script shows it (docs/api.md §14)
    served = page.request.get("/review?status=all").text()
    stamps = re.findall(r'<time datetime="([^"]+)">([^<]+)</time>', served)
    assert stamps and all(text == local(value, "America/New_York") for value, text in stamps)
    times = page.locator("time[datetime]")
    expect(times.first).to_have_text(local(stamps[0][0], "America/New_York"))
    for value, text in page.evaluate(
        "[...document.querySelectorAll('time[datetime]')].map((t) => [t.getAttribute('datetime'), t.textContent])"
    ):
        assert text == local(value, "America/New_York")
    assert hint in page.locator("time + .time-hint").first.inner_text()
    task = demo["tasks"][0]
    page.goto(f"/review/{task['id']}")
    assert page.locator(".timeline time").first.inner_text() == local(task["timeline"][0]["at"], "America/New_York")
    console.assert_clean()


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12"])  # UTC+14 and UTC-12: one of the two
def test_the_list_date_filters_mean_the_viewers_days(open_page, demo, console, zone):  # always differs from UTC
    page = open_page("en", "wide", timezone=zone)
    sign_in_as(page, "en", "/review?status=all")
    today = datetime.now(ZoneInfo(zone)).date()
    for day, expected in ((today, 5), (today - timedelta(days=1), 0), (today + timedelta(days=1), 0)):
        page.get_by_label("Created from").fill(day.isoformat())
        page.get_by_label("Created to").fill(day.isoformat())
        page.get_by_role("button", name="Apply filters").click()
        page.wait_for_url(f"**to={day.isoformat()}**")
        expect(page.locator("table.list tbody tr")).to_have_count(expected)
    page.goto("/feedback")
    page.get_by_label("From").fill(today.isoformat())
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(f"**from={today.isoformat()}**")  # the unfiltered page shows as many rows, another link
    expect(page.locator("table.list tbody tr")).to_have_count(len(demo["feedback"]))
    export = page.get_by_role("link", name="Export CSV").get_attribute("href")
    assert f"from={today.isoformat()}T00%3A00%3A00.000" in export  # the CSV covers the same days
    console.assert_clean()
