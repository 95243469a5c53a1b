"""An article task in the browser: pick and edit fields, preview, library cover, approve and publish
against the fake platform; API errors appear next to the field they concern."""

import re

from playwright.sync_api import expect

from tests.helpers.browser import screenshot, sign_in, stored_task, task_by_topic

TOPIC = "芯片的下一个十年"


def test_pick_edit_approve_and_publish_an_article(page, demo, live_server, console):
    task = task_by_topic(demo, TOPIC)
    option_b = task["candidates"]["bodyOptions"][1]
    library = {asset["fileName"]: asset for asset in demo["library"]}
    sign_in(page, f"/review/{task['id']}")
    screenshot(page, "review-article-detail")

    # Candidates side by side: outlines split on "|", focuses listed, drafts rendered.
    options = page.locator(".body-option")
    assert options.count() == 2
    assert options.nth(0).locator(".outline li").all_inner_texts() == ["背景", "现状", "展望"]
    assert options.nth(1).locator(".tags li").all_inner_texts() == ["混合键合", "共封装光学"]
    assert options.nth(0).locator(".rendered h2").first.inner_text() == "背景"

    # Pick a title as it is, rewrite the summary by hand, pick an author.
    page.get_by_label("摩尔定律之后：封装的黄金时代", exact=True).check()
    expect(page.get_by_label("Final title")).to_have_value("摩尔定律之后：封装的黄金时代")
    expect(page.locator('[data-edited-for="title"]')).to_be_hidden()
    page.get_by_label("Final summary").fill("芯片行业的新方向：先进封装与芯粒。")
    expect(page.locator('[data-edited-for="summary"]')).to_be_visible()
    page.get_by_label("林一", exact=True).check()

    # Body: start from option B, edit it, choose a theme; the preview follows.
    page.get_by_label("Option 2", exact=True).check()  # the option's id is no longer shown (docs/api.md §14)
    body = page.get_by_label("Final body (Markdown)")
    expect(body).to_have_value(option_b["content"])
    edited = option_b["content"] + "\n## 结语\n\n封装决定未来。\n"
    body.fill(edited)
    expect(page.locator('[data-edited-for="body"]')).to_be_visible()
    page.get_by_label("Theme").select_option("tech-blue")
    expect(page.locator("#preview h2").last).to_have_text("结语")

    # Cover from the material library; the body image from the second candidate.
    page.locator('[data-library-for="cover-choice"]').click()
    expect(page.get_by_role("dialog")).to_be_visible()
    page.get_by_role("button", name=re.compile(r"^Use library-landscape\.png")).click()
    expect(page.get_by_role("dialog")).to_be_hidden()
    page.locator("#bodyimg-0-tiles label").nth(1).click()
    screenshot(page, "review-article-edited")

    page.get_by_label("Approve and publish").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#page-message")).to_contain_text("Published as WeChat draft")
    expect(page.locator("#task-status")).to_have_text("Draft ready")
    job = page.locator("table.jobs tbody tr").first
    expect(job).to_contain_text("Succeeded")  # job states and event kinds as words (docs/api.md §14)
    expect(job).to_contain_text("After approval")
    expect(page.locator('.timeline li[data-event="publish_succeeded"]')).to_contain_text("Platform draft ready")
    screenshot(page, "review-article-published")

    saved = stored_task(task["id"])
    candidates = task["candidates"]
    cover_ref = {"assetId": library["library-landscape.png"]["assetId"]}
    assert saved["selections"] == {
        "title": "摩尔定律之后：封装的黄金时代",
        "summary": "芯片行业的新方向：先进封装与芯粒。",
        "author": "林一",
        "body": edited,
        "coverImage": cover_ref,
        "bodyImages": [candidates["bodyImageCandidates"][0]["options"][1]],
    }
    assert saved["manualOverrides"] == {
        "summary": {"basedOn": candidates["summaries"][0], "value": "芯片行业的新方向：先进封装与芯粒。"},
        "body": {"basedOnCandidateId": "chip-b", "value": edited},
        "coverImage": {"basedOn": candidates["coverImages"][0], "value": cover_ref},
    }
    draft = saved["bodyDraft"]
    assert (
        draft["markdown"],
        draft["sourceBodyCandidateId"],
        draft["bodyEditedFromCandidate"],
        draft["themeTemplate"],
    ) == (edited, "chip-b", True, "tech-blue")
    assert draft["sourceBodyCandidate"] == option_b["content"]
    [published] = saved["publishJobs"]
    assert published["status"] == "succeeded"
    platform_draft = live_server.platform.drafts[published["draftMediaId"]]
    assert platform_draft["articles"][0]["title"] == "摩尔定律之后：封装的黄金时代"
    assert "结语" in platform_draft["articles"][0]["content"]
    console.assert_clean()


def test_api_errors_are_shown_next_to_the_field(page, demo, console):
    console.allow(r"status of 400")
    task = task_by_topic(demo, "冬季跑步指南")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Final summary").fill("长" * 110)
    expect(page.locator('[data-count-for="summary"]')).to_have_text("110")
    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()

    error = page.locator("#err-summary")
    expect(error).to_be_visible()
    expect(error).to_contain_text("At most 100 characters at approval (now 110)")
    expect(page.get_by_label("Final summary")).to_have_attribute("aria-invalid", "true")
    # The particulars are beside their fields: the summary says the code's sentence, not them again.
    expect(page.locator("#decision-error")).to_have_text("Some entries need changing.")
    screenshot(page, "review-article-error")
    assert stored_task(task["id"])["status"] == "pending_review"

    # Fixing the field clears the error on the next submit, which then succeeds.
    page.get_by_label("Final summary").fill("低温跑步的热身、穿衣和配速。")
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound
    expect(page.locator("#page-message")).to_contain_text("Approved without publishing.")
    expect(page.get_by_role("button", name="Publish to WeChat drafts")).to_be_visible()
    console.assert_clean()


def test_rework_round_trip_keeps_the_reviewers_edits_apart_from_the_agents(page, demo, live_server, console):
    import requests

    from tests.helpers.app import AGENT_TOKEN

    task = task_by_topic(demo, "AI 芯片散热的新办法")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Final summary").fill("液冷板、浸没式冷却与微流道，三种办法。")
    page.get_by_label("Reject for rework").check()
    page.get_by_label("Title", exact=True).check()
    page.get_by_label("Reason").select_option("content_quality")
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Rejected for rework")
    saved = stored_task(task["id"])
    assert saved["lockedSelections"]["summary"] == "液冷板、浸没式冷却与微流道，三种办法。"
    assert set(saved["manualOverrides"]) == {"summary"}

    response = requests.patch(
        f"{live_server.url}/api/review/agent/tasks/{task['id']}/elements",
        json={"title": "液冷时代：AI 芯片怎样散热"},
        headers={"x-review-agent-token": AGENT_TOKEN},
        timeout=10,
    )
    assert response.status_code == 200 and response.json()["status"] == "pending_review"

    page.reload()
    expect(page.locator("#task-status")).to_have_text("Pending review")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound
    expect(page.get_by_label("Final title")).to_have_value("液冷时代：AI 芯片怎样散热")
    expect(page.locator('input[name="title-choice"]:checked')).to_have_count(0)
    expect(page.locator('[data-edited-for="title"]')).to_be_hidden()
    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound

    saved = stored_task(task["id"])
    assert saved["selections"]["title"] == "液冷时代：AI 芯片怎样散热"
    # The agent's new title is not a reviewer override; the reviewer's summary edit still is.
    assert saved["manualOverrides"] == {
        "summary": {"basedOn": "液冷、浸没式与微流道。", "value": "液冷板、浸没式冷却与微流道，三种办法。"}
    }
    console.assert_clean()


def test_a_picked_body_image_replaces_the_one_the_body_shows(page, demo, live_server, console):
    task = task_by_topic(demo, TOPIC)
    first, second = task["candidates"]["bodyImageCandidates"][0]["options"]
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Option 1", exact=True).check()
    body = page.get_by_label("Final body (Markdown)")
    original = body.input_value()
    assert f"]({first})" in original
    page.locator("#bodyimg-0-tiles label").nth(1).click()
    expect(body).to_have_value(original.replace(f"]({first})", f"]({second})"))
    expect(page.locator('[data-edited-for="body"]')).to_be_visible()
    expect(page.locator(f'#preview img[src="{second}"]')).to_have_count(1)
    page.locator("#bodyimg-0-tiles label").nth(0).click()
    expect(body).to_have_value(original)
    expect(page.locator('[data-edited-for="body"]')).to_be_hidden()
    page.locator("#bodyimg-0-tiles label").nth(1).click()

    page.get_by_label("Approve and publish").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Draft ready")
    saved = stored_task(task["id"])
    [job] = saved["publishJobs"]
    assert saved["selections"]["bodyImages"] == [second]
    assert f"]({second})" in job["snapshot"]["bodyMarkdown"] and first not in job["snapshot"]["bodyMarkdown"]
    console.assert_clean()
