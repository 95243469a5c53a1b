"""Feedback triage in the browser: filters and counts on /feedback, a record with its screenshot,
and the status form."""

from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in


def rows(page):
    return page.locator("table.list tbody tr")


def test_filter_open_and_triage_a_feedback(page, demo, console):
    sign_in(page, "/feedback")
    expect(rows(page)).to_have_count(4)
    counts = {
        s: page.locator(f'[data-status-count="{s}"]').inner_text()
        for s in ("all", "unprocessed", "processing", "processed")
    }
    assert counts == {"all": "4", "unprocessed": "2", "processing": "1", "processed": "1"}
    screenshot(page, "feedback-list")

    page.get_by_label("Type").select_option("bug")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows(page)).to_have_count(1)
    assert page.locator('[data-status-count="all"]').inner_text() == "4"  # counts cover the whole table
    page.goto("/feedback")
    page.get_by_label("Search").fill("封面")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("发布后封面图模糊")
    expect(rows(page).first.locator("td").nth(5)).to_have_text("2")  # two attachments

    rows(page).first.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("发布后封面图模糊")
    screenshot_img = page.get_by_role("img", name="Screenshot cover-blurry.png")
    expect(screenshot_img).to_be_visible()
    shown = screenshot_img.element_handle()
    page.wait_for_function("(img) => img.complete", arg=shown)  # loaded (lazily, after the page's navigation)
    assert page.evaluate("(img) => img.naturalWidth", shown) == 390
    expect(page.get_by_role("link", name="reader.log")).to_be_visible()
    expect(page.locator("pre.log")).to_contain_text("cover loaded 320x180")
    screenshot(page, "feedback-detail")

    page.get_by_label("Processed", exact=True).check()
    page.get_by_label("Note").fill("封面压缩参数已调整，下个版本修复。")
    page.get_by_role("button", name="Save status").click()
    expect(page.locator("#page-message")).to_contain_text("Saved: Processed by demo.")
    expect(page.locator("#feedback-status")).to_have_text("Processed")
    expect(page.locator("#processed-info")).to_contain_text("Processed by demo at")
    expect(page.get_by_label("Note")).to_have_value("封面压缩参数已调整，下个版本修复。")

    page.get_by_role("link", name="← Feedback").click()
    expect(page.locator('[data-status-count="processed"]')).to_have_text("2")  # the list, once it has loaded
    console.assert_clean()


def test_bad_filters_are_explained_next_to_the_field(page, demo, console):
    sign_in(page, "/feedback")
    page.get_by_label("From").fill("2026-03-02")
    page.get_by_label("To").fill("2026-03-01")
    page.get_by_role("button", name="Apply filters").click()
    expect(page.get_by_role("alert")).to_contain_text("Change the filters below")
    expect(page.locator("#err-to")).to_contain_text("Must not be earlier than from")
    console.assert_clean()


def test_one_long_unbroken_word_does_not_widen_the_pages(page, demo, live_server, console):
    import requests

    word = "x" * 400
    created = requests.post(
        f"{live_server.url}/api/feedbacks",
        timeout=10,
        headers={"x-feedback-client-token": "client-web-token"},
        json={
            "appName": "reader",
            "appVersion": "1.0",
            "platform": "web",
            "type": "bug",
            "title": word[:200],
            "content": word,
            "logText": "y" * 3000,
        },
    ).json()
    sign_in(page, "/feedback")
    for width in (1360, 800):  # at 900px and less the columns stack: a log line widened them to 24,000px
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/feedback", f"/feedback/{created['id']}"):
            page.goto(path)
            expect(page.get_by_text(word[:200]).first).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (path, width)
    article = next(task for task in demo["tasks"] if task["contentType"] == "article")
    page.goto(f"/review/{article['id']}")
    page.get_by_label("Final body (Markdown)").fill("```\n" + "z" * 3000 + "\n```\n")
    expect(page.locator("#preview pre")).to_contain_text("z" * 100)
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    console.assert_clean()
