"""No admin page scrolls sideways on a narrow phone (docs/api.md §14): the list, both kinds of task, the
feedback list and detail, the sign-in and an error page, at 320, 360, 375 and 390 CSS px, in both
languages. Nothing inside a page sticks out of its box and is cut off either (the body options' cards)."""

import pytest

from tests.helpers.browser import sign_in_as, task_by_topic

WIDTHS = (320, 360, 375, 390)

# Elements whose right edge passes the right edge of the box that holds them (a card cut off), other
# than what scrolls on purpose (a table's scroller, the rendered drafts, the preview frame).
CUT_OFF = """() => {
    const out = [];
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    for (const el of document.querySelectorAll('main *')) {
        const parent = el.parentElement;
        if (!parent || !el.offsetParent || scrolls(parent) || getComputedStyle(el).position === 'absolute') continue;
        if (el.closest('.table-scroll, .rendered, .wx-frame, .visually-hidden, dialog')) continue;
        const box = el.getBoundingClientRect(), holder = parent.getBoundingClientRect();
        if (box.width > 0 && box.right > holder.right + 1 && holder.width > 0) {
            out.push(`${el.tagName.toLowerCase()}.${el.className} +${Math.round(box.right - holder.right)}px`);
        }
    }
    return out.slice(0, 5);
}"""


def pages(demo):
    article = task_by_topic(demo, "芯片的下一个十年")
    post = task_by_topic(demo, "一周力量训练打卡")
    feedback = demo["feedback"][0]  # the one with a screenshot and a log
    return [
        ("review list", "/review?status=all"),
        ("article task", f"/review/{article['id']}"),
        ("image post task", f"/review/{post['id']}"),
        ("comments", "/comments"),
        ("feedback list", "/feedback"),
        ("feedback detail", f"/feedback/{feedback['id']}"),
        ("error page", "/review/no-such-task"),
    ]


def overflow(page):
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_no_page_scrolls_sideways_on_a_narrow_phone(browser, live_server, demo, console, language):
    console.allow(r"status of 404")
    found = []
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": WIDTHS[0], "height": 740}, locale=language, has_touch=True
    )
    context.set_default_timeout(10_000)
    context.add_cookies([{"name": "review_lang", "value": language, "url": live_server.url}])
    page = context.new_page()
    console.attach(page)

    def measure(name):  # each page loaded once, then laid out again at each width
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 740})
            if overflow(page) > 0:
                found.append(f"{name} at {width} px: +{overflow(page)} px")
            cut = page.evaluate(CUT_OFF)
            if cut:
                found.append(f"{name} at {width} px cuts off {cut}")

    page.goto("/login")
    measure("login")
    sign_in_as(page, language, "/review?status=all")
    for name, path in pages(demo):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        measure(name)
    context.close()
    assert found == [], "\n".join(found)
    console.assert_clean()
