"""The preview follows the cursor (docs/api.md §14): editing section 112 of a long article shows section 112 in
the preview, on a desk beside the editor and on a phone in a frame of bounded height (the page does not grow
with the body); an image post has its live newspic card (images, title, description) too."""

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in_as, task_by_topic

SECTIONS = 120
LONG = "\n\n".join(f"## 第{n}节\n\n" + f"第{n}节的正文，讲芯片封装的一个细节。" * 5 for n in range(1, SECTIONS + 1))

# Where the element is in the frame's visible box: "in" when its top is inside it.
PLACE = """([frameSel, text]) => {
    const frame = document.querySelector(frameSel);
    const el = [...frame.querySelectorAll('h2, p')].find((e) => e.textContent.includes(text));
    if (!el) return 'missing';
    const f = frame.getBoundingClientRect(), r = el.getBoundingClientRect();
    return r.top >= f.top && r.top < f.bottom ? 'in' : (r.top < f.top ? 'above' : 'below');
}"""


def put_caret_after(page, text):
    page.evaluate(
        """(text) => {
        const editor = document.getElementById('final-body');
        const at = editor.value.indexOf(text) + text.length;
        editor.focus();
        editor.setSelectionRange(at, at);
    }""",
        text,
    )


@pytest.mark.parametrize(("language", "size"), [("zh-CN", "wide"), ("en", "phone")])
def test_editing_near_the_end_of_a_long_body_shows_that_part(open_page, demo, console, language, size):
    task = task_by_topic(demo, "芯片的下一个十年")
    page = open_page(language, size)
    sign_in_as(page, language, f"/review/{task['id']}")
    short_page = page.evaluate("document.documentElement.scrollHeight")
    body = page.locator('textarea[data-role="body"]')
    body.fill(LONG)
    frame = '[data-role="preview"]'
    expect(page.locator(frame).get_by_role("heading", name=f"第{SECTIONS}节")).to_have_count(1)

    put_caret_after(page, "第112节的正文，讲芯片封装的一个细节。")
    page.keyboard.type("就在这里改。")
    expect(page.locator(frame).locator("p", has_text="就在这里改。")).to_have_count(1)  # rendered
    page.wait_for_function(f"() => ({PLACE})([{frame!r}, '就在这里改。']) === 'in'", timeout=5000)
    assert page.evaluate(PLACE, [frame, "第1节的正文"]) == "above"

    put_caret_after(page, "## 第7节")  # moving the caret up (no typing) takes the preview along
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({PLACE})([{frame!r}, '第7节']) === 'in'", timeout=5000)

    # The frame has its own scroll: the page is as tall with 20,000 characters as with the agent's draft.
    grown = page.evaluate("document.documentElement.scrollHeight") - short_page
    assert grown < 400, grown
    if size == "phone":
        box = page.locator(frame).bounding_box()
        assert box["height"] <= page.viewport_size["height"] * 0.75
    screenshot(page, f"preview-follows-{language}-{size}")
    console.assert_clean()


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_an_image_post_has_its_live_card(open_page, demo, console, size):
    task = task_by_topic(demo, "一周力量训练打卡")
    page = open_page("zh-CN", size)
    sign_in_as(page, "zh-CN", f"/review/{task['id']}")
    card = page.locator('[data-role="preview"]')
    expect(card.locator(".wx-title")).to_have_text(page.locator("#final-title").input_value())
    shown = page.locator("#image-list li").count()
    expect(card.locator(".wx-gallery img")).to_have_count(shown)
    expect(card.locator(".wx-account")).to_have_text(task["publicAccount"])

    page.locator("#final-title").fill("")
    page.locator("#final-title").press_sequentially("练到第四周", delay=20)
    expect(card.locator(".wx-title")).to_have_text("练到第四周")
    page.locator("#final-description").fill("每天二十分钟。")
    expect(card.locator(".wx-text")).to_have_text("每天二十分钟。")
    page.locator("#image-list li").first.get_by_role("button", name="移除第 1 张图片").click()
    expect(card.locator(".wx-gallery img")).to_have_count(shown - 1)
    expect(card.locator(".wx-count")).to_have_text(f"图片：{shown - 1}")
    first = page.locator("#image-list li img").first.get_attribute("src")
    assert card.locator(".wx-gallery img").first.get_attribute("src") == first  # the cover leads
    if size == "wide":  # beside the fields, in view while the reviewer scrolls down to the images
        page.locator("#field-coverCrop").scroll_into_view_if_needed()
        title = card.locator(".wx-title").bounding_box()
        assert 0 <= title["y"] and title["y"] + title["height"] <= page.viewport_size["height"], title
    screenshot(page, f"post-preview-zh-{size}")
    console.assert_clean()
