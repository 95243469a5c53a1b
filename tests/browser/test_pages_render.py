"""Every admin page renders in Chromium without console errors, with a logout button, and its
screenshot is saved to tests/output/."""

from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in

ALL_IMAGES_LOADED = """Promise.all([...document.images].map(
    (i) => i.complete || new Promise((done) => { i.onload = done; i.onerror = done; })))"""


def test_every_page_renders_without_console_errors(page, demo, console):
    page.goto("/login")
    screenshot(page, "login")
    sign_in(page, "/review")
    pages = [("review-pending", "/review"), ("comments", "/comments"), ("feedback-all", "/feedback")]
    pages += [(f"task-{n}-{t['contentType']}", f"/review/{t['id']}") for n, t in enumerate(demo["tasks"], 1)]
    pages += [(f"feedback-{n}", f"/feedback/{f['id']}") for n, f in enumerate(demo["feedback"], 1)]
    for name, path in pages:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        page.evaluate(ALL_IMAGES_LOADED)
        expect(page.get_by_role("button", name="Log out")).to_be_visible()
        broken = page.evaluate("[...document.images].filter(i => i.complete && i.naturalWidth === 0).map(i => i.src)")
        assert broken == [], (path, broken)
        screenshot(page, f"page-{name}")
        assert console.unexpected() == [], (path, console.unexpected())

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**/login")
    page.goto("/review")
    assert "/login?next=/review" in page.url
    console.assert_clean()


def test_api_docs_lists_every_operation_with_its_parameters_resolved(page, demo, console):
    doc = page.request.get("/api/openapi.json").json()
    operations = sum(len(set(ops) - {"parameters"}) for ops in doc["paths"].values())
    page.goto("/api/docs")
    expect(page.locator("#operations details")).to_have_count(operations)
    decision = page.locator("#operations details", has_text="POST /api/review/tasks/{task_id}/decision")
    decision.locator("summary").click()
    text = decision.locator("pre").inner_text()
    assert '"name": "If-Match"' in text and "$ref" not in text.split('"requestBody"')[0]
    # The overview, an operation's longer description and the rejection webhook are shown too.
    expect(page.locator("#overview")).to_contain_text("POST /api/auth/login")
    patch = page.locator("#operations details", has_text="PATCH /api/review/agent/tasks/{task_id}/elements")
    patch.locator("summary").click()
    expect(patch.locator("p")).to_contain_text("material-library")
    webhook = page.locator("#webhooks details", has_text="POST review_task.rejected")
    webhook.locator("summary").click()
    expect(webhook).to_contain_text("webhook-signature")
    console.assert_clean()
