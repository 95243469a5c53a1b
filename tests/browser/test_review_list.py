"""Signing in and finding tasks on /review: status tabs with counts, account and date filters."""

import re

from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in


def rows(page):
    return page.locator("table.list tbody tr")


def test_sign_in_lands_on_the_page_asked_for_and_filters_the_list(page, demo, console):
    page.goto("/review?status=all")
    assert "/login?next=" in page.url  # signed out: the page sends people to the login form
    page.get_by_label("User name").fill("demo")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong user name or password.")  # the form's answer is a new page
    sign_in(page, "/review?status=all")

    assert page.get_by_role("heading", name="Review tasks").is_visible()
    assert rows(page).count() == len(demo["tasks"]) == 5
    assert page.locator('[data-status-count="all"]').inner_text() == "5"
    assert page.locator('[data-status-count="pending_review"]').inner_text() == "5"
    assert page.locator('[data-status-count="published"]').inner_text() == "0"
    # Newest first: the last sample task created is the first row.
    assert rows(page).first.get_attribute("data-task-id") == demo["tasks"][-1]["id"]
    screenshot(page, "review-list")

    page.get_by_label("Account").select_option("carbon-fitness")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url("**publicAccount=carbon-fitness**")
    assert rows(page).count() == 2
    assert set(rows(page).locator("td:nth-child(2)").all_inner_texts()) == {"carbon-fitness"}
    assert page.locator('[data-status-count="all"]').inner_text() == "2"  # counts follow the filters

    page.get_by_role("link", name="Draft ready").click()
    expect(page.locator("#result-summary")).to_contain_text("No tasks match these filters.")
    assert page.get_by_role("link", name="Draft ready").get_attribute("aria-current") == "page"

    page.goto("/review?status=all")
    page.get_by_label("Created from").fill("2030-01-02")
    page.get_by_label("Created to").fill("2030-01-01")
    page.get_by_role("button", name="Apply filters").click()
    expect(page.get_by_role("alert")).to_contain_text("must be earlier than or equal to")  # the server's page
    expect(page.locator("#err-from")).to_be_visible()  # next to the field concerned
    expect(page.get_by_label("Created from")).to_have_attribute("aria-describedby", "err-from")
    console.assert_clean()


def test_paging_moves_forward_and_back(page, demo, console):
    from models import db
    from schemas.review import CreateTaskSchema
    from services import review

    sample = demo["tasks"][-1]
    with db.connection_context():
        for number in range(40):
            payload = {
                "publicAccount": "silicon-rise",
                "topic": f"Extra task {number:02d}",
                "contentType": "article",
                "candidates": sample["candidates"],
            }
            review.create_task(CreateTaskSchema().load(payload))
    sign_in(page, "/review?status=all")
    summary = page.locator("#result-summary")

    def showing(words, count, first=None):  # expect(): a click starts a navigation, it does not wait for it
        expect(summary).to_contain_text(words)
        expect(rows(page)).to_have_count(count)
        if first:
            expect(rows(page).first).to_have_text(re.compile(rf"^\s*{first}"))

    showing("Showing 1–20 of 45", 20)
    page.get_by_role("link", name="Next page →").click()
    showing("Showing 21–40 of 45", 20)
    page.get_by_role("link", name="Next page →").click()
    showing("Showing 41–45 of 45", 5)
    assert page.get_by_role("link", name="Next page →").count() == 0
    page.get_by_role("link", name="← Previous page").click()
    showing("Showing 21–40 of 45", 20, "Extra task 19")
    page.get_by_role("link", name="← Previous page").click()
    showing("Showing 1–20 of 45", 20, "Extra task 39")
    assert page.get_by_role("link", name="← Previous page").count() == 0
    console.assert_clean()
