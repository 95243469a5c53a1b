"""Every admin page on a phone and for assistive technology (docs/api.md §14): at 1366×900 and 390×844, in
Chinese and English, no sideways scrolling and no critical or serious axe-core violation of the WCAG
2.0/2.1/2.2 A and AA rules (target size included). The list and both kinds of task are photographed in
Chinese at phone size into tests/output/."""

import pytest

from tests.helpers.browser import OUTPUT, axe_violations, screenshot, sideways_overflow, sign_in_as

ALL_IMAGES_LOADED = """Promise.all([...document.images].map(
    (i) => i.complete || new Promise((done) => { i.onload = done; i.onerror = done; })))"""


def workspace_pages(demo):
    article = next(task for task in demo["tasks"] if task["contentType"] == "article")
    post = next(task for task in demo["tasks"] if task["contentType"] == "image_post")
    feedback = (
        next(item for item in demo["feedback"] if item.get("attachments"))
        if any(item.get("attachments") for item in demo["feedback"])
        else demo["feedback"][0]
    )
    return [
        ("review-list", "/review?status=all"),
        ("article-task", f"/review/{article['id']}"),
        ("image-post-task", f"/review/{post['id']}"),
        ("comments", "/comments"),
        ("feedback-list", "/feedback"),
        ("feedback-detail", f"/feedback/{feedback['id']}"),
    ]


def check(page, language, where):
    assert page.evaluate("document.documentElement.lang") == language, where
    assert sideways_overflow(page) <= 0, f"{where}: wider than the window by {sideways_overflow(page)} px"
    assert axe_violations(page) == [], where


@pytest.mark.parametrize("size", ["wide", "phone"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_every_page_fits_the_screen_and_passes_axe(open_page, demo, console, language, size):
    page = open_page(language, size)
    page.goto("/login")
    check(page, language, "login")
    sign_in_as(page, language)
    for name, path in workspace_pages(demo):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        page.evaluate(ALL_IMAGES_LOADED)
        check(page, language, name)
        if size == "phone" and name in ("review-list", "article-task", "image-post-task"):
            short = "zh" if language == "zh-CN" else "en"
            screenshot(page, f"workspace-{name}-{short}-phone")  # the whole page
            page.screenshot(path=str(OUTPUT / f"workspace-{name}-{short}-phone-screen.png"))  # what the phone shows
    console.assert_clean()


def test_the_check_finds_what_it_looks_for(open_page, demo, console):
    """The helper is not blind: a 12 px button crowded by another and pale text are reported."""
    page = open_page("en", "phone")
    page.goto("/login")
    page.evaluate("""() => {
        const box = document.createElement('div');
        box.innerHTML = '<button style="all:unset;width:12px;height:12px;display:inline-block">a</button>'
            + '<button style="all:unset;width:12px;height:12px;display:inline-block">b</button>'
            + '<p style="color:#ccc;background:#fff">pale words</p>';
        document.querySelector('main').append(box);
    }""")
    found = " ".join(axe_violations(page))
    assert "target-size" in found and "color-contrast" in found
    console.assert_clean()
