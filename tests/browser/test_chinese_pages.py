"""Chinese pages speak Chinese throughout (docs/api.md §14): no English interface text on any page, error pages
and the messages of the page's own actions included (a refused decision, a bad filter), only data and codes
in Latin letters; feedback type `account` reads 账号. English pages keep the API's particulars."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in_as, task_by_topic

# What a person reads on the page, minus content (topics, bodies, feedback text, file names, ids, logs):
# text nodes and the labels assistive technology reads out.
READ_TEXT = """() => {
    const content = 'script, style, textarea, code, pre, kbd, time, .rendered, .wx-frame, .tags, .outline, .choices,'
        + ' .prewrap, .facts dd, .diff, table.list td:first-child, .tile, .strip, .image-list li, .who,'
        + ' .badge.account, .library-item, .attachments a, .attachments img, .job-error';
    const shown = (el) => el.getClientRects().length > 0 || el.closest('dialog');
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || parent.closest(content) || !shown(parent) || !node.textContent.trim()) continue;
        out.push(node.textContent.trim());
    }
    document.querySelectorAll('[aria-label], [title], [placeholder], img[alt]').forEach((el) => {
        if (el.closest(content)) return;
        ['aria-label', 'title', 'placeholder', 'alt'].forEach((name) => {
            if (el.getAttribute(name)) out.push(el.getAttribute(name));
        });
    });
    return out;
}"""
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Names that are written in Latin letters in Chinese too, and the data of the demo (account ids, the
# feedback's platforms and channels, which are FEEDBACK_CLIENT_TOKENS names).
NAMES = {"API", "English", "Markdown", "ZIP", "CSV", "PNG", "JPEG", "GIF", "WebP", "ID", "URL", "KiB", "MiB"}
DATA = {"silicon", "rise", "carbon", "fitness", "demo", "fb", "ios", "android", "web", "app", "coach", "reader", "px"}


def english_words(page):
    return sorted(
        {
            word
            for text in page.evaluate(READ_TEXT)
            for word in LATIN_WORD.findall(text)
            if word not in NAMES and word.lower() not in DATA
        }
    )


def test_no_english_interface_text_on_the_chinese_pages(open_page, demo, console):
    console.allow(r"status of 404")
    page = open_page("zh-CN", "wide")
    page.goto("/login")
    assert english_words(page) == [], "login"
    sign_in_as(page, "zh-CN", "/review?status=all")
    account = next(item for item in demo["feedback"] if item["type"] == "account")
    for path in [
        "/review?status=all",
        f"/review/{task_by_topic(demo, '芯片的下一个十年')['id']}",
        f"/review/{task_by_topic(demo, '一周力量训练打卡')['id']}",
        "/feedback",
        f"/feedback/{demo['feedback'][0]['id']}",
        f"/feedback/{account['id']}",
        "/review/no-such-task",
    ]:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        assert english_words(page) == [], path
    expect(page.get_by_role("heading", level=1)).to_have_text("404")
    expect(page.locator("main")).to_contain_text("要找的内容不存在或已删除。")
    page.goto(f"/feedback/{account['id']}")
    expect(page.locator(".detail-head .badge").nth(1)).to_have_text("账号")
    console.assert_clean()


def test_a_refused_action_is_explained_in_chinese(open_page, demo, console):
    console.allow(r"status of 400")
    page = open_page("zh-CN", "wide")
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in_as(page, "zh-CN", f"/review/{task['id']}")
    page.get_by_label("最终摘要").fill("长" * 110)
    page.get_by_label("仅通过").check()
    page.get_by_role("button", name="提交决定").click()
    beside = page.locator("#err-summary")
    expect(beside).to_contain_text("请检查此项")
    expect(page.locator("#decision-error")).to_be_visible()
    for shown in (beside, page.locator("#decision-error")):
        assert LATIN_WORD.findall(shown.inner_text()) == [], shown.inner_text()

    page.goto("/feedback")
    page.get_by_label("起始日期").fill("2026-03-02")
    page.get_by_label("截止日期").fill("2026-03-01")
    page.get_by_role("button", name="筛选").click()
    alert = page.locator("#filter-error")
    expect(alert).to_contain_text("请修改下面的筛选条件。")
    for shown in (alert, page.locator("#err-to")):
        assert LATIN_WORD.findall(shown.inner_text()) == [], shown.inner_text()
    console.assert_clean()


@pytest.mark.parametrize("where", ["decision", "error page"])
def test_english_pages_keep_the_apis_particulars(open_page, demo, console, where):
    console.allow(r"status of 40[04]")
    page = open_page("en", "wide")
    if where == "error page":
        sign_in_as(page, "en", "/review")
        page.goto("/review/no-such-task")
        expect(page.locator("main")).to_contain_text("This no longer exists. No review task with id no-such-task.")
    else:
        task = task_by_topic(demo, "冬季跑步指南")
        sign_in_as(page, "en", f"/review/{task['id']}")
        page.get_by_label("Final summary").fill("长" * 110)
        page.get_by_label("Approve without publishing").check()
        page.get_by_role("button", name="Submit decision").click()
        expect(page.locator("#err-summary")).to_contain_text("At most 100 characters at approval (now 110)")
        expect(page.locator("#decision-error")).to_contain_text("Some entries need changing.")
    console.assert_clean()
