"""Package download and delete from the task page."""
import zipfile

from playwright.sync_api import expect

from tests.browser.conftest import sign_in, task_by_topic


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
