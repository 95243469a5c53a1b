"""Publishing from the page at the platform's latency: the step it is at while it runs, the controls
held until it ends, then the draft sent to a phone (docs/api.md §12)."""

from playwright.sync_api import expect

from tests.helpers.app import reload_settings
from tests.helpers.browser import sign_in, stored_task, task_by_topic


def test_progress_while_publishing_then_a_preview_on_the_phone(page, demo, live_server, console):
    app, fake = live_server.app, live_server.platform
    app.config["WECHAT_PREVIEW_RECIPIENTS"] = "silicon-rise: lead-reviewer-wx, second-wx"
    app.config["WECHAT_UPLOAD_CONCURRENCY"] = 1  # one upload after another: the steps stay on screen
    reload_settings(app)
    task = task_by_topic(demo, "AI 芯片散热的新办法")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Approve without publishing").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Approved")
    page.wait_for_load_state("load")  # reloaded after the action: scripts bound

    # each step outlasts several polls of the page, even on a loaded machine
    fake.set_latency(1.0, paths={"/draft/add": (2.5, 0.0)})
    page.get_by_role("button", name="Publish to WeChat drafts").click()
    progress = page.locator("#publish-progress")
    expect(progress).to_contain_text("Uploading images:", timeout=5_000)
    expect(page.get_by_role("button", name="Delete task…")).to_be_disabled()
    expect(page.locator("#publish-btn")).to_be_disabled()
    expect(progress).to_contain_text("Saving the draft on WeChat", timeout=15_000)
    expect(page.locator("#page-message")).to_contain_text("Published as WeChat draft", timeout=15_000)
    expect(progress).to_be_hidden()
    fake.set_latency(0)

    preview = page.locator("#phone-preview")
    expect(preview.get_by_label("Recipient")).to_have_value("lead-reviewer-wx")
    preview.get_by_label("Recipient").select_option("")  # someone not in the list, typed in
    preview.get_by_label("or a WeChat ID").fill("guest-wx")
    preview.get_by_role("button", name="Send preview to phone").click()
    expect(page.locator("#page-message")).to_contain_text("Preview sent to guest-wx's phone.")
    expect(page.locator('.timeline li[data-event="preview_sent"]')).to_contain_text("guest-wx")
    draft = stored_task(task["id"])["publishJobs"][-1]["draftMediaId"]
    assert fake.previews == [{"appid": fake.previews[0]["appid"], "towxname": "guest-wx", "media_id": draft}]
    console.assert_clean()


def test_a_refused_preview_says_why(page, demo, live_server, console):
    console.allow(r"status of 502")
    fake = live_server.platform
    task = task_by_topic(demo, "AI 芯片散热的新办法")
    sign_in(page, f"/review/{task['id']}")
    page.get_by_label("Approve and publish").check()
    page.get_by_role("button", name="Submit decision").click()
    # The progress shows "Draft ready" before the page reloads; the reloaded page's message, then its
    # load (its scripts bound the preview form), say the reload is over.
    expect(page.locator("#page-message")).to_contain_text("Published as WeChat draft", timeout=15_000)
    page.wait_for_load_state("load")
    expect(page.locator("#task-status")).to_have_text("Draft ready")
    fake.unfollowed.add("stranger-wx")
    page.get_by_label("WeChat ID").fill("stranger-wx")
    page.get_by_role("button", name="Send preview to phone").click()
    expect(page.locator("#page-error")).to_have_text(  # the code's sentence, then the API's particulars
        "The WeChat platform refused the request. The platform refused the preview: platform error 43004: "
        "require subscribe hint: the user does not follow the account."
    )
    expect(page.locator('.timeline li[data-event="preview_sent"]')).to_have_count(0)
    console.assert_clean()


def test_an_article_created_with_titles_only_gets_its_body_from_the_reviewer(page, live_server, demo, console):
    """Issue 20: the page offers a body to write when the agent sent none, and the task publishes."""
    import requests

    from tests.helpers.app import AGENT_TOKEN
    from tests.helpers.review import png_bytes

    agent = {"x-review-agent-token": AGENT_TOKEN}
    cover = requests.post(
        f"{live_server.url}/api/assets/upload",
        headers=agent,
        timeout=10,
        files={"file": ("cover.png", png_bytes(900, 500), "image/png")},
    ).json()
    created = requests.post(
        f"{live_server.url}/api/review/agent/tasks",
        headers=agent,
        timeout=10,
        json={
            "publicAccount": "silicon-rise",
            "topic": "只有标题的文章",
            "candidates": {"titles": ["先有标题"], "summaries": ["摘要"], "coverImages": [cover["url"]]},
        },
    )
    assert created.status_code == 201, created.text
    task = created.json()
    sign_in(page, f"/review/{task['id']}")
    expect(page.locator("#no-body-options")).to_be_visible()
    page.get_by_label("Final body (Markdown)").fill("# 正文\n\n评审人写的正文。")
    page.get_by_label("Approve and publish").check()
    page.get_by_role("button", name="Submit decision").click()
    expect(page.locator("#task-status")).to_have_text("Draft ready")
    saved = stored_task(task["id"])
    assert saved["bodyDraft"]["markdown"] == "# 正文\n\n评审人写的正文。"
    assert saved["bodyDraft"]["sourceBodyCandidateId"] is None
    [draft] = live_server.platform.drafts.values()
    assert "评审人写的正文" in draft["articles"][0]["content"]
    console.assert_clean()
