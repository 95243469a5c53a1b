"""Image posts in the browser: a field-level rejection made with the keyboard only, publishing
with a failed job and its retry against the fake platform, the image list by keyboard, and edits
that choosing another candidate would discard."""

from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in, stored_task, task_by_topic


def focus_ring(page):
    return page.evaluate("getComputedStyle(document.activeElement).outlineStyle")


def test_reject_an_image_post_per_field_with_the_keyboard_only(page, demo, console):
    task = task_by_topic(demo, "一周力量训练打卡")
    sign_in(page, f"/review/{task['id']}")
    # Comments default to on and not fans-only, whatever the candidates say.
    assert task["candidates"]["commentSettings"] == [{"needOpenComment": False, "onlyFansCanComment": True}]
    expect(page.get_by_label("Open comments")).to_be_checked()
    expect(page.get_by_label("Only followers can comment")).not_to_be_checked()
    expect(page.locator("#image-list li")).to_have_count(4)
    screenshot(page, "review-image-post-detail")

    # The crop chooser by keyboard: a smaller box, moved down.
    page.get_by_label("Crop size (% of the largest 3:4 box)").focus()
    for _ in range(20):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "crop-y"
    page.keyboard.press("End")
    expect(page.locator("#crop-readout")).to_contain_text("Box 720×960 px of 900×1200, from (90, 240)")

    # From the last field of the form on, only Tab, arrows, Space, typing and Enter.
    page.get_by_label("Only followers can comment").focus()
    page.keyboard.press("Tab")  # the post's live preview, a scrollable region, takes the focus on its way
    assert page.evaluate("document.activeElement.dataset.role") == "preview"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.value") == "approve_and_publish"
    assert focus_ring(page) != "none"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_label("Reject for rework")).to_be_checked()
    expect(page.locator("#reject-details")).to_be_enabled()
    page.keyboard.press("Tab")  # Title
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # Description
    page.keyboard.press("Space")
    for _ in range(4):  # Images, Cover crop, Comment settings, then the reason
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "rejection-reason"
    for _ in range(4):
        page.keyboard.press("ArrowDown")
    expect(page.get_by_label("Reason")).to_have_value("style_mismatch")
    page.keyboard.press("Tab")
    page.keyboard.type("标题和描述都太像广告，请换成训练记录的口吻。")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "decision-submit"
    assert focus_ring(page) != "none"
    screenshot(page, "review-image-post-reject-form")
    page.keyboard.press("Enter")

    expect(page.locator("#task-status")).to_have_text("Rejected for rework")
    expect(page.locator("#page-message")).to_contain_text("Sent back to the agent for rework.")
    expect(page.get_by_label("Rework requested")).to_contain_text("Title, Description")
    screenshot(page, "review-image-post-rejected")

    saved = stored_task(task["id"])
    images = [{"assetId": ref["assetId"]} for ref in task["candidates"]["imageGroups"][0]["images"]]
    assert saved["rejectedElements"] == ["title", "description"]
    assert saved["rejectionReason"] == "style_mismatch"
    assert saved["rejectionNote"] == "标题和描述都太像广告，请换成训练记录的口吻。"
    locked = saved["lockedSelections"]
    assert set(locked) == {"images", "coverCrop", "commentSettings"}
    assert locked["images"] == images
    assert locked["commentSettings"] == {"needOpenComment": True, "onlyFansCanComment": False}
    assert locked["coverCrop"] == {
        "assetId": images[0]["assetId"],
        "cropPercentList": [{"ratio": "3_4", "x1": 0.1, "y1": 0.2, "x2": 0.9, "y2": 1.0}],
    }
    assert {key: saved["selections"][key] for key in locked} == locked
    console.assert_clean()


def test_publish_shows_a_failed_job_with_its_error_and_retries_it(page, demo, live_server, console):
    task = task_by_topic(demo, "展会现场速递")
    group = [ref["assetId"] for ref in task["candidates"]["imageGroups"][0]["images"]]
    portrait = next(a for a in demo["library"] if a["fileName"] == "library-portrait.png")
    sign_in(page, f"/review/{task['id']}")
    # Reorder, drop one and add one from the library; the crop follows the new first image.
    page.get_by_role("button", name="Move image 2 up").click()
    page.get_by_role("button", name="Remove image 3").click()
    page.get_by_role("button", name="Add from the library or upload…").click()
    page.get_by_role("button", name="Use library-portrait.png (900×1200)").click()
    expect(page.locator("#image-list li")).to_have_count(3)
    expect(page.locator("#image-list li").first).to_contain_text("expo-2.png")
    expect(page.locator("#crop-readout")).to_contain_text("of 1200×900")
    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound
    saved = stored_task(task["id"])
    final = [{"assetId": group[1]}, {"assetId": group[0]}, {"assetId": portrait["assetId"]}]
    assert saved["selections"]["images"] == final
    assert saved["manualOverrides"] == {"images": {"basedOn": [{"assetId": a} for a in group], "value": final}}
    assert saved["selections"]["coverCrop"]["assetId"] == group[1]

    live_server.platform.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")
    page.get_by_role("button", name="Publish to WeChat drafts").click()
    # A failed job is an error (announced as an alert), not a success notice.
    expect(page.get_by_role("alert")).to_contain_text("Publishing failed: platform error 45004")
    expect(page.locator("#page-error")).to_have_class("notice error")
    expect(page.locator("#page-message")).to_be_hidden()
    failed = page.locator("table.jobs tbody tr").first
    expect(failed).to_contain_text("Failed")
    expect(failed.locator(".job-error")).to_contain_text("45004")
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound
    screenshot(page, "review-image-post-failed-job")
    # Beside the long error, the short cells keep their words whole (they were squeezed to "Attemp t").
    lines = page.evaluate(
        """() => [...document.querySelectorAll('table.jobs th, table.jobs .retry-btn, table.jobs td[data-label]')]
            .filter(e => e.textContent.trim()).map(e => {
                const range = document.createRange(); range.selectNodeContents(e);
                return [e.textContent.trim(), new Set([...range.getClientRects()].map(r => Math.round(r.top))).size];
            })"""
    )
    assert lines and all(count == 1 for _text, count in lines), lines

    failed.get_by_role("button", name="Retry").click()
    expect(page.locator("#task-status")).to_have_text("Draft ready")
    rows = page.locator("table.jobs tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Succeeded")
    expect(rows.first).to_contain_text("(retry)")
    expect(rows.nth(1)).to_contain_text("Failed")
    screenshot(page, "review-image-post-published")

    jobs = stored_task(task["id"])["publishJobs"]
    assert [job["status"] for job in jobs] == ["failed", "succeeded"]
    assert jobs[1]["retryOf"] == jobs[0]["id"] and jobs[1]["attemptCount"] == 2
    draft = live_server.platform.drafts[jobs[1]["draftMediaId"]]["articles"][0]
    assert draft["article_type"] == "newspic"
    assert draft["need_open_comment"] == 1 and draft["only_fans_can_comment"] == 0
    console.assert_clean()


def test_approve_and_publish_states_the_approval_and_shows_the_failed_job_as_an_error(page, demo, live_server, console):
    task = task_by_topic(demo, "一周力量训练打卡")
    sign_in(page, f"/review/{task['id']}")
    live_server.platform.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")
    page.get_by_label("Approve and publish").check()
    page.get_by_role("button", name="Submit decision").click()

    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound
    expect(page.get_by_role("status")).to_have_text("Approved.")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Publishing failed: platform error 45004")
    expect(alert).to_contain_text("Fix the cause and retry the job.")
    expect(alert).to_have_class("notice error")
    screenshot(page, "review-image-post-approved-publish-failed")
    console.assert_clean()


def test_moving_and_removing_images_keeps_the_keyboard_focus(page, demo, console):
    task = task_by_topic(demo, "一周力量训练打卡")
    sign_in(page, f"/review/{task['id']}")
    items = page.locator("#image-list li")
    button = lambda name: page.get_by_role("button", name=name, exact=True)  # noqa: E731

    button("Move image 3 up").focus()
    page.keyboard.press("Enter")
    expect(items.nth(1)).to_contain_text("gym-3.png")
    expect(button("Move image 2 up")).to_be_focused()
    page.keyboard.press("Enter")  # now the cover: its "up" is disabled, so focus goes to its "down"
    expect(items.first).to_contain_text("1. gym-3.png")
    expect(button("Move image 1 down")).to_be_focused()
    page.keyboard.press("Enter")
    expect(items.nth(1)).to_contain_text("gym-3.png")
    expect(button("Move image 2 down")).to_be_focused()

    button("Remove image 2").focus()
    page.keyboard.press("Enter")  # the next image takes its place and its Remove button the focus
    expect(items).to_have_count(3)
    expect(items.nth(1)).to_contain_text("gym-2.png")
    expect(button("Remove image 2")).to_be_focused()
    button("Remove image 3").focus()
    page.keyboard.press("Enter")  # the last one: focus goes to the new last
    expect(items).to_have_count(2)
    expect(button("Remove image 2")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(items).to_have_count(0)
    expect(page.get_by_role("button", name="Add from the library or upload…")).to_be_focused()
    console.assert_clean()


def test_choosing_another_candidate_asks_before_discarding_an_edit(page, demo, console):
    task = task_by_topic(demo, "一周力量训练打卡")
    sign_in(page, f"/review/{task['id']}")
    questions, answers = [], []

    def answer(dialog):
        questions.append(dialog.message)
        dialog.accept() if answers.pop(0) else dialog.dismiss()

    page.on("dialog", answer)
    title = page.get_by_label("Final title")
    group_a = page.locator('input[name="group-choice"][value="week-a"]')
    group_b = page.locator('input[name="group-choice"][value="week-b"]')
    items = page.locator("#image-list li")

    # Nothing edited: the other candidate replaces the value without a question.
    page.get_by_label("7 天力量训练计划", exact=True).check()
    expect(title).to_have_value("7 天力量训练计划")
    group_b.check()
    expect(items).to_have_count(2)
    assert questions == []

    # An edited title: declining keeps the edit and the radio that was chosen.
    title.fill("我的一周训练")
    answers.append(False)
    page.get_by_label("一周力量训练打卡", exact=True).click()
    expect(title).to_have_value("我的一周训练")
    expect(page.get_by_label("7 天力量训练计划", exact=True)).to_be_checked()
    expect(page.locator('[data-edited-for="title"]')).to_be_visible()
    assert "Replace your edited title" in questions[-1]
    answers.append(True)
    page.get_by_label("一周力量训练打卡", exact=True).click()
    expect(title).to_have_value("一周力量训练打卡")
    expect(page.locator('[data-edited-for="title"]')).to_be_hidden()

    # A reordered image list: the same for the image groups.
    page.get_by_role("button", name="Move image 2 up").click()
    expect(items.first).to_contain_text("gym-2.png")
    answers.append(False)
    group_a.click()
    expect(group_b).to_be_checked()
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("gym-2.png")
    assert "Replace your edited image list" in questions[-1]
    answers.append(True)
    group_a.click()
    expect(group_a).to_be_checked()
    expect(items).to_have_count(4)
    expect(items.first).to_contain_text("gym-1.png")
    assert len(questions) == 4 and answers == []
    console.assert_clean()
