"""The reviewer's own images (spec decision rule 9: "Images from local upload or the material library"):
uploaded from the picker dialog, used as a cover or added to an image post, refused with a message
when the file is no image; a picture already in an image post's list is not added twice."""

import io
import re

from PIL import Image
from playwright.sync_api import expect

from models import Asset, db
from tests.helpers.browser import sign_in, stored_task, task_by_topic


def png(width, height, color):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def upload(page, name, data, keep=False):
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Or upload one from this computer").set_input_files(
        files=[{"name": name, "mimeType": "image/png", "buffer": data}]
    )
    dialog.get_by_label("keep it in the library for other tasks").set_checked(keep)
    dialog.get_by_role("button", name="Upload and use").click()


def asset_scope(asset_id):
    with db.connection_context():
        return Asset.get(Asset.asset_id == asset_id).scope


def test_an_uploaded_cover_is_used_and_a_file_that_is_no_image_is_refused(page, demo, console):
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_role("button", name="Choose from the library or upload…").first.click()

    console.allow(re.compile(r"status of 400"))
    upload(page, "notes.png", b"plain text, not a picture")
    expect(page.locator("#library-error")).to_contain_text("image")
    expect(page.get_by_role("dialog")).to_be_visible()

    upload(page, "my-cover.png", png(900, 500, (30, 120, 200)))
    expect(page.get_by_role("dialog")).to_be_hidden()
    tile = page.locator("#cover-choice-tiles label").last
    expect(tile).to_contain_text("Uploaded · 900×500")
    expect(tile.locator("input")).to_be_checked()
    expect(page.get_by_role("button", name="Choose from the library or upload…").first).to_be_focused()

    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    saved = stored_task(task["id"])
    cover = saved["selections"]["coverImage"]
    assert asset_scope(cover["assetId"]) == "review"  # task-local: deleted with the task
    assert saved["manualOverrides"]["coverImage"]["value"] == cover
    console.assert_clean()


def test_an_image_post_takes_an_upload_into_the_library_but_no_picture_twice(page, demo, console):
    task = task_by_topic(demo, "展会现场速递")
    sign_in(page, f"/review/{task['id']}")
    items = page.locator("#image-list li")
    before = items.count()
    add = page.get_by_role("button", name="Add from the library or upload…")

    add.click()
    upload(page, "booth.png", png(600, 800, (200, 60, 20)), keep=True)
    expect(items).to_have_count(before + 1)
    expect(items.last).to_contain_text("booth.png · 600×800")
    first = items.first.inner_text()

    add.click()  # the same picture again, now from the library
    page.get_by_role("button", name=re.compile(r"^Use booth\.png")).click()
    expect(items).to_have_count(before + 1)
    message = page.locator('[data-error-for="images"]')
    expect(message).to_have_text(f"Booth.png is image {before + 1} of the list already.")
    expect(add).to_be_focused()
    assert items.first.inner_text() == first

    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    images = stored_task(task["id"])["selections"]["images"]
    assert len(images) == before + 1 and asset_scope(images[-1]["assetId"]) == "library"
    console.assert_clean()
