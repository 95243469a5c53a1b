"""approve_and_publish: the decision commits with its job's claim, then the job runs in the same request."""

import re
import threading

from models.review import PublishJob, ReviewTask
from rules.ids import now_iso
from services.publishing import jobs
from tests.helpers.app import assert_error, create_admin, login, reload_settings
from tests.helpers.publishing import (
    ARTICLE_KEYS,
    approved_article,
    approved_image_post,
    events_of,
    platform_settings,
    publish_url,
    retry_url,
)
from tests.helpers.review import make_asset


def retry_buttons(admin_client, task):
    """The job ids of the Retry buttons the task page shows."""
    page = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    return re.findall(r'<button type="button" class="retry-btn" data-job-id="([^"]+)"', page)


def test_approve_and_publish_creates_the_draft_and_publishes_the_task(app, admin_client, agent_headers, fake):
    task, cover = approved_article(app, admin_client, agent_headers, action="approve_and_publish")

    assert task["status"] == "published"
    [job] = task["publishJobs"]
    assert (job["status"], job["triggerMode"], job["attemptCount"]) == ("succeeded", "auto_after_approval", 1)
    [article] = fake.drafts[job["draftMediaId"]]["articles"]
    assert set(article) == ARTICLE_KEYS and article["title"] == task["selections"]["title"]
    assert job["snapshot"]["coverImage"] == cover["url"]
    types = [event["type"] for event in task["timeline"]]
    assert types[-2:] == ["approved", "publish_succeeded"]
    assert events_of(task, "publish_succeeded")[0]["data"]["triggerMode"] == "auto_after_approval"
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json() == task


def test_approve_and_publish_of_an_image_post_creates_a_newspic_draft(app, admin_client, agent_headers, fake):
    images = [make_asset(app, 300, 400), make_asset(app, 600, 800)]

    task = approved_image_post(app, admin_client, agent_headers, images, action="approve_and_publish")

    assert task["status"] == "published"
    [job] = task["publishJobs"]
    assert job["triggerMode"] == "auto_after_approval"
    [article] = fake.drafts[job["draftMediaId"]]["articles"]
    assert article["article_type"] == "newspic" and len(article["image_info"]["image_list"]) == 2


def test_no_manual_publish_comes_between_the_approval_and_its_auto_job(
    app, admin_client, agent_headers, fake, monkeypatch
):
    """A manual publish sent while approve_and_publish runs waits for it (was: it took the claim
    after the approval committed, and the decision answered 409 although it had taken effect)."""
    from tests.helpers.review import approve_article, article_payload, create_task, decision_url

    task = create_task(admin_client, agent_headers, article_payload())
    decision = approve_article(task, make_asset(app, 900, 500), action="approve_and_publish")
    other = app.test_client()
    login(other)
    manual = {}

    def publish_manually():
        manual["response"] = other.post(publish_url(task))

    claim = jobs._claim

    def claim_after_a_manual_publish(task_id, if_match, config, trigger_mode, source_job_id=None):
        if trigger_mode == "auto_after_approval":  # the manual publish goes as far as it can first
            racer = threading.Thread(target=publish_manually)
            racer.start()
            racer.join(timeout=1)
            manual["thread"] = racer
        return claim(task_id, if_match, config, trigger_mode, source_job_id)

    monkeypatch.setattr(jobs, "_claim", claim_after_a_manual_publish)
    response = admin_client.post(decision_url(task), json=decision)
    manual["thread"].join(timeout=30)

    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    published = response.get_json()
    assert published["status"] == "published"
    assert [job["triggerMode"] for job in published["publishJobs"]] == ["auto_after_approval"]
    # It found the auto job running, or the task published already.
    assert manual["response"].status_code == 409
    assert manual["response"].get_json()["error"]["code"] in ("publish_in_progress", "invalid_state")
    assert len(fake.drafts) == 1


def test_approve_without_publish_calls_no_platform(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)

    assert task["status"] == "approved" and task["publishJobs"] == []
    assert fake.requests == []


def test_a_failed_auto_publish_keeps_the_approval_and_can_be_retried(app, admin_client, agent_headers, fake):
    fake.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")

    task, _ = approved_article(app, admin_client, agent_headers, action="approve_and_publish")

    assert task["status"] == "approved"
    [job] = task["publishJobs"]
    assert (job["status"], job["triggerMode"], job["lastError"]) == (
        "failed",
        "auto_after_approval",
        "platform error 45004: description size out of limit",
    )
    assert retry_buttons(admin_client, task) == [job["id"]]  # the retry below is accepted
    retried = admin_client.post(retry_url(task, job)).get_json()
    assert retried["status"] == "published"
    assert (retried["publishJobs"][1]["triggerMode"], retried["publishJobs"][1]["attemptCount"]) == ("manual", 2)
    assert retry_buttons(admin_client, task) == []  # the task is published: a retry is refused


def test_a_job_still_running_offers_no_retry(app, admin_client, agent_headers, fake):
    """A job reads `failed` from its start (it says so if the service stops): until it finishes, a retry is
    refused and the page shows none."""
    task, _ = approved_article(app, admin_client, agent_headers)
    with app.app_context():
        PublishJob.create(
            job_id="running-job",
            task=ReviewTask.get(ReviewTask.task_id == task["id"]),
            status="failed",
            trigger_mode="manual",
            queued_at=now_iso(),
            started_at=now_iso(),
            snapshot={"title": "t"},
        )

    assert retry_buttons(admin_client, task) == []
    error = assert_error(admin_client.post(retry_url(task, {"id": "running-job"})), 409, "invalid_state")
    assert error["details"]["jobStatus"] == ["running"]


def test_an_unusable_theme_setting_fails_the_auto_job_instead_of_undoing_the_approval(make_app, fake, agent_headers):
    app = make_app(**platform_settings(fake, WECHAT_THEME_OVERRIDES={"silicon-rise": {"--no-such-thing": "1"}}))
    create_admin()
    admin_client = app.test_client()
    login(admin_client)

    task, _ = approved_article(app, admin_client, agent_headers, action="approve_and_publish")

    assert task["status"] == "approved"
    [job] = task["publishJobs"]
    assert job["status"] == "failed" and "snapshot" not in job
    assert job["lastError"].startswith("the theme cannot be applied: unknown CSS variable '--no-such-thing'")
    assert fake.requests == []
    # nothing to retry from, and the page offers no Retry; a manual publish says why while the setting is wrong
    assert retry_buttons(admin_client, task) == []
    assert_error(admin_client.post(retry_url(task, job)), 409, "invalid_state")
    error = assert_error(admin_client.post(publish_url(task)), 409, "invalid_state")
    assert "--no-such-thing" in error["message"]
    app.config["WECHAT_THEME_OVERRIDES"] = {}
    reload_settings(app)  # as a restart with the fixed setting would
    assert admin_client.post(publish_url(task)).get_json()["status"] == "published"
