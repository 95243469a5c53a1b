"""Package download and delete from the task page, and what a failed download or a stale page says."""

import zipfile
from pathlib import Path

from playwright.sync_api import expect

from tests.helpers.browser import sign_in, task_by_topic


def test_download_the_package_of_a_task(page, demo, tmp_path, console):
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in(page, f"/review/{task['id']}")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download package (ZIP)").click()
    download = info.value
    assert download.suggested_filename == f"review-{task['id']}.zip"
    target = tmp_path / "package.zip"
    download.save_as(target)
    with zipfile.ZipFile(target) as archive:
        assert "manuscript.md" in archive.namelist()
        assert "冬季跑步指南" in archive.read("manuscript.md").decode()
    console.assert_clean()


def test_delete_asks_first_then_goes_back_to_the_list(page, demo, console):
    task = task_by_topic(demo, "AI 芯片散热的新办法")
    sign_in(page, f"/review/{task['id']}")
    messages = []

    def answer(dialog, accept):
        messages.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    page.get_by_role("button", name="Delete task…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(task["topic"])  # dismissed: nothing happened
    page.once("dialog", lambda dialog: answer(dialog, True))
    page.get_by_role("button", name="Delete task…").click()
    page.wait_for_url("**/review")
    assert "cannot be undone" in messages[0] and len(messages) == 2
    expect(page.locator("#page-message")).to_contain_text(f'Deleted the task "{task["topic"]}"')
    expect(page.locator(f'tr[data-task-id="{task["id"]}"]')).to_have_count(0)
    console.assert_clean()


def test_a_faulty_image_refuses_the_download_with_a_readable_list(page, demo, live_server, console):
    console.allow(r"status of 409")
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # the page reloads after a decision: its scripts bind the buttons
    cover_url = task["candidates"]["coverImages"][0]
    (Path(live_server.uploads) / "review" / cover_url.rsplit("/", 1)[1]).unlink()

    page.get_by_role("button", name="Download package (ZIP)").click()
    error = page.get_by_role("alert")
    # The code's sentence, then the API's particulars (docs/api.md §14: English pages keep them).
    expect(error).to_have_text(
        "The package could not be built. "
        "1 final image(s) of the task are missing or faulty; fix or replace them and "
        "download again. Cover image (run-cover.png): the stored file is missing."
    )
    console.assert_clean()


def test_a_stale_page_says_to_reload_without_internal_details(page, demo, console):
    console.allow(r"status of 412")
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in(page, f"/review/{task['id']}")
    other = page.context.new_page()  # the same reviewer in a second tab changes the task first
    other.goto(f"/review/{task['id']}")
    other.get_by_label("Approve without publishing").check()
    other.get_by_role("button", name="Submit decision").click()
    expect(other.locator("#task-status")).to_have_text("Approved")
    other.wait_for_load_state("load")  # reloaded after the action: scripts bound

    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    # docs/api.md §15: who changed it and a reload button (tests/browser/test_team_presence.py), no version numbers.
    expect(page.locator("#decision-error")).to_have_text(
        "This task was changed after this page was opened; your decision was not saved. Changed by demo. "
        "Reload the task"
    )
    console.assert_clean()
