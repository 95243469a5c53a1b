"""A body too long to render with the task page (docs/api.md §14) is rendered when the reviewer asks:
the option's button shows it as written, and the live preview fills itself once the page is up."""

from models import db
from services.auth import save_admin
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import DEMO_ADMIN, sideways_overflow, sign_in
from tests.helpers.review import article_payload, body_option, create_task


def test_show_as_written_and_the_deferred_preview(page, live_server, console):
    with db.connection_context():
        save_admin(DEMO_ADMIN, ADMIN_PASSWORD, "review,feedback")
    long_body = "## 很长的一节\n\n" + "长文正文。" * 7_000  # 35,000 characters
    candidates = {
        **article_payload()["candidates"],
        "bodyOptions": [body_option("long", long_body), body_option("short", "## 短的\n\n短文。")],
    }
    task = create_task(
        live_server.app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload(candidates=candidates)
    )
    sign_in(page, f"/review/{task['id']}")
    option = page.locator('.body-option[data-option-id="long"] .rendered')
    assert option.get_by_role("button", name="Show as written").is_visible()
    # The live preview asked for the long body by itself.
    page.locator("#preview h2").wait_for()
    assert "很长的一节" in page.locator("#preview h2").text_content()
    option.get_by_role("button", name="Show as written").click()
    option.locator("h2").wait_for()
    assert "很长的一节" in option.locator("h2").text_content()
    assert page.locator('.body-option[data-option-id="short"] .rendered h2').text_content().strip() == "短的"
    assert sideways_overflow(page) <= 0
    console.assert_clean()
