"""The reviewer's workspace in Chromium (docs/api.md §14), part two: the task page.

- the decision in reach wherever the reviewer has scrolled (a side panel on a wide screen, a bar at the
  bottom of a phone), covering none of the task;
- the live WeChat preview: the publish renderer's article in a 375 px frame, following the typing;
- results beside the control or in the panel's live region, in view; a refusal says why;
- the keyboard: j/k/Enter in the list, 1/2/3 and Enter on a task, ? lists the keys, nothing while typing.
"""

import re

import pytest
from playwright.sync_api import expect

from models import db
from services import review
from tests.helpers.browser import sign_in_as, task_by_topic

BOTH = [("zh-CN", "wide"), ("zh-CN", "phone"), ("en", "wide"), ("en", "phone")]
WORDS = {
    "zh-CN": {
        "publish": "通过并生成草稿",
        "submit": "提交决定",
        "published": "已生成微信草稿",
        "sent": "预览已发送到 guest-wx 的手机。",
        "refused": "微信公众平台拒绝了这个请求",
        "send": "发送预览到手机",
        "wechat_id": "微信号",
        "keys": "快捷键",
    },
    "en": {
        "publish": "Approve and publish",
        "submit": "Submit decision",
        "published": "Published as WeChat draft",
        "sent": "Preview sent to guest-wx's phone.",
        "refused": "The platform refused the preview",
        "send": "Send preview to phone",
        "wechat_id": "WeChat ID",
        "keys": "Keyboard shortcuts",
    },
}

IN_VIEW = """(el) => { const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight + 0.5 && r.right <= window.innerWidth + 0.5; }"""
ON_TOP = """(el) => { const r = el.getBoundingClientRect();  // nothing covers its middle: a tap reaches it
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit !== null && (hit === el || el.contains(hit) || hit.contains(el)
                            || hit.closest('label') === el.closest('label')); }"""


def in_view(locator):
    return locator.evaluate(IN_VIEW)


@pytest.mark.parametrize(("language", "size"), BOTH)
def test_the_decision_stays_in_reach_and_covers_none_of_the_task(open_page, demo, console, language, size):
    page = open_page(language, size)
    sign_in_as(page, language, "/review")
    for topic in ("芯片的下一个十年", "一周力量训练打卡"):
        page.goto(f"/review/{task_by_topic(demo, topic)['id']}")
        panel = page.locator('[data-role="decision"]')
        choice = panel.get_by_label(WORDS[language]["publish"])
        submit = panel.get_by_role("button", name=WORDS[language]["submit"])
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height > 2 * page.viewport_size["height"]  # a long task: the question is real
        for fraction in (0, 0.5, 1):
            page.evaluate("(y) => window.scrollTo(0, y)", height * fraction)
            page.wait_for_timeout(50)  # let the scroll settle (no assertion on time)
            for control in (choice, submit):
                assert in_view(control) and control.evaluate(ON_TOP), (topic, fraction)
        box = panel.bounding_box()
        if size == "phone":  # a bar at the bottom, the whole width
            assert box["width"] == page.viewport_size["width"]
            assert abs(box["y"] + box["height"] - page.viewport_size["height"]) <= 1
            last = page.locator(".timeline").bounding_box()  # scrolled to the end, the task ends above the bar
            assert last["y"] + last["height"] <= box["y"] + 1
        else:  # a panel beside the task
            content = page.locator(".task-main").bounding_box()
            assert box["x"] >= content["x"] + content["width"] and box["y"] >= 0
        choice.check()
        expect(choice).to_be_checked()
    console.assert_clean()


def rendered(live_server, markdown, theme, account):
    """The body as publishing renders it (services.review.preview_body: the publish renderer and theme)."""
    overrides = live_server.app.extensions["settings"].theme_overrides_for(account)
    with db.connection_context():
        return review.preview_body(markdown, theme, overrides)[0]


@pytest.mark.parametrize(("language", "size"), BOTH)
def test_the_live_preview_is_the_published_article_following_the_typing(
    open_page, demo, live_server, console, language, size
):
    task = task_by_topic(demo, "芯片的下一个十年")
    page = open_page(language, size)
    sign_in_as(page, language, f"/review/{task['id']}")
    frame = page.locator('[data-role="preview"]')
    body = page.locator('textarea[name="body"][data-role="body"]')
    box = frame.bounding_box()
    assert box["width"] == (375 if size == "wide" else min(375, box["width"])) and box["width"] <= 375
    expect(frame.locator(".wx-title")).to_have_text(task["candidates"]["titles"][0])
    expect(frame.locator(".wx-account")).to_have_text(task["publicAccount"])
    expect(frame.locator(".wx-date")).to_have_text(re.compile(r"^\d{4}-\d{2}-\d{2}"))
    assert page.locator("#preview-refresh").count() == 0  # no button: it follows by itself

    requests = []
    page.on("request", lambda r: r.url.endswith("/api/review/preview") and requests.append(r))
    body.click()
    page.keyboard.press("Control+End")
    typed = "\n\n## 实时小节\n\n边写边看效果。"
    body.press_sequentially(typed, delay=25)
    expect(frame.locator("#preview h2").last).to_have_text("实时小节")
    assert 1 <= len(requests) <= len(typed) // 4  # debounced: one request per pause, not per key

    # What the publish renderer makes of the whole text, nothing else: the heading shows as soon as a
    # preview of part of the typing comes back, the rest with the preview of the last pause (under load,
    # later), so the test waits for that one rather than comparing at once.
    markdown = body.input_value()
    assert markdown.endswith(typed)
    page.wait_for_function(
        "(html) => { const t = document.createElement('template'); t.innerHTML = html;"
        " return document.getElementById('preview').innerHTML === t.innerHTML; }",
        arg=rendered(live_server, markdown, "default", task["publicAccount"]),
    )

    page.locator("#theme-template").select_option("tech-blue")
    expect(frame.locator("#preview section").first).to_have_attribute("style", re.compile("letter-spacing"))
    tech = rendered(live_server, markdown, "tech-blue", task["publicAccount"])
    page.wait_for_function(
        "(html) => { const t = document.createElement('template'); t.innerHTML = html;"
        " return document.getElementById('preview').innerHTML === t.innerHTML; }",
        arg=tech,
    )

    page.get_by_label("Final title" if language == "en" else "最终标题").fill("新的标题")
    expect(frame.locator(".wx-title")).to_have_text("新的标题")
    console.assert_clean()


def test_steady_typing_updates_the_preview_before_the_typist_pauses(open_page, demo, console):
    """A debounce alone waits for a pause: someone typing faster than four keys a second saw nothing
    until they stopped. The preview asks again at least every 0.6 s while the typing goes on."""
    task = task_by_topic(demo, "芯片的下一个十年")
    page = open_page("zh-CN", "wide")
    sign_in_as(page, "zh-CN", f"/review/{task['id']}")
    body = page.locator('textarea[name="body"][data-role="body"]')
    requests = []
    page.on("request", lambda r: r.url.endswith("/api/review/preview") and requests.append(r))
    body.click()
    page.keyboard.press("Control+End")
    body.press_sequentially("一二三四五六七八九十" * 3, delay=100)  # about 3 s, a key every 0.1 s
    during = len(requests)  # sent before the last key: the typist has not paused yet
    assert during >= 2, during
    console.assert_clean()


def publish(page, language, task):
    sign_in_as(page, language, f"/review/{task['id']}")
    panel = page.locator('[data-role="decision"]')
    panel.get_by_label(WORDS[language]["publish"]).check()
    panel.get_by_role("button", name=WORDS[language]["submit"]).click()
    expect(page.locator("#page-message")).to_contain_text(WORDS[language]["published"])


@pytest.mark.parametrize(("language", "size"), BOTH)
def test_results_show_where_the_reviewer_looks(open_page, demo, live_server, console, language, size):
    console.allow(r"status of 502")
    page = open_page(language, size)
    publish(page, language, task_by_topic(demo, "AI 芯片散热的新办法"))
    message = page.locator("#page-message")
    assert message.evaluate("(el) => el.closest('[data-role=decision]') !== null")  # in the panel, in view
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    assert in_view(message)

    form = page.locator("#phone-preview")
    form.get_by_label(WORDS[language]["wechat_id"]).fill("guest-wx")
    button = form.get_by_role("button", name=WORDS[language]["send"])
    button.click()
    beside = page.locator("#phone-preview-result")
    expect(beside).to_have_text(WORDS[language]["sent"])
    expect(message).to_have_text(WORDS[language]["sent"])
    assert in_view(beside) and in_view(message)
    near = beside.bounding_box()["y"] - button.bounding_box()["y"]
    assert abs(near) < 3 * button.bounding_box()["height"]  # beside the button, not at the top of the page
    expect(page.locator('.timeline li[data-event="preview_sent"]')).to_contain_text("guest-wx")

    live_server.platform.unfollowed.add("stranger-wx")
    form.get_by_label(WORDS[language]["wechat_id"]).fill("stranger-wx")
    button.click()
    expect(beside).to_contain_text(WORDS[language]["refused"])
    expect(beside).to_contain_text("43004")  # and why: the platform's own answer
    expect(page.locator("#page-error")).to_contain_text(WORDS[language]["refused"])
    assert in_view(page.locator("#page-error"))
    console.assert_clean()


@pytest.mark.parametrize(("language", "size"), [("zh-CN", "wide"), ("en", "phone")])
def test_feedback_saved_beside_its_button(open_page, demo, console, language, size):
    page = open_page(language, size)
    sign_in_as(page, language, f"/feedback/{demo['feedback'][0]['id']}")
    page.locator('input[name="status"][value="processing"]').check()
    save = page.locator("#status-save")
    save.click()
    beside = page.locator("#status-result")
    expect(beside).to_have_text("已保存：处理中。" if language == "zh-CN" else "Saved: Processing.")
    assert in_view(beside) and abs(beside.bounding_box()["y"] - save.bounding_box()["y"]) < 3 * 40
    expect(page.locator("#feedback-status")).to_have_text("处理中" if language == "zh-CN" else "Processing")
    console.assert_clean()


@pytest.mark.parametrize(("language", "size"), BOTH)
def test_the_keyboard_reaches_the_list_and_the_decision(open_page, demo, console, language, size):
    page = open_page(language, size)
    sign_in_as(page, language, "/review?status=all")
    rows = page.locator("#task-list tbody tr")
    page.get_by_label("Created from" if language == "en" else "创建日期从").focus()
    page.keyboard.press("j")  # typing in a field: nothing moves
    assert page.locator("#task-list tr.current").count() == 0
    page.locator("h1").click()
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class("current")
    page.keyboard.press("k")
    expect(rows.nth(0)).to_have_class("current")
    expect(rows.nth(0).locator("a")).to_be_focused()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(WORDS[language]["keys"])
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    target = rows.nth(0).get_attribute("data-task-id")
    rows.nth(0).locator("a").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/{target}")

    body = page.locator("#final-body, #final-description").first
    body.click()
    page.keyboard.press("1")  # typed into the field, not a decision
    expect(page.locator('input[name="action"]:checked')).to_have_count(0)
    page.locator("h1").click()
    page.keyboard.press("3")
    expect(page.locator('input[name="action"][value="reject_rework"]')).to_be_checked()
    page.keyboard.press("Escape")
    page.locator("h1").click()
    page.keyboard.press("1")
    expect(page.locator('input[name="action"][value="approve_and_publish"]')).to_be_checked()
    expect(page.locator("#decision-submit")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#page-message")).to_contain_text(WORDS[language]["published"])
    console.assert_clean()
