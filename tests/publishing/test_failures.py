"""Each way a publish fails gives a failed job with a readable lastError, and a retry from its snapshot."""

from pathlib import Path

import pytest

from models import db
from models.review import ReviewTask
from tests.helpers.app import assert_error, create_admin, login, reload_settings
from tests.helpers.publishing import ACCOUNTS, approved_article, events_of, platform_settings, publish, retry_url
from tests.helpers.review import make_asset

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def retry(admin_client, task, job, status=200):
    response = admin_client.post(retry_url(task, job))
    assert response.status_code == status, response.get_data(as_text=True)[:800]
    return response.get_json()


def assert_failed(task, last_error):
    """The task stayed approved with one failed job saying `last_error`; returns that job."""
    assert task["status"] == "approved"
    [job] = task["publishJobs"]
    assert (job["status"], job["attemptCount"], job["lastError"]) == ("failed", 1, last_error)
    assert "draftMediaId" not in job and "\n" not in job["lastError"]
    assert job["queuedAt"] <= job["startedAt"] <= job["finishedAt"]
    [event] = events_of(task, "publish_failed")
    assert event["data"]["jobId"] == job["id"] and event["data"]["lastError"] == last_error
    return job


def assert_retried(task, failed, fake):
    """The retry succeeded as a second, manual job that names the failed one."""
    assert task["status"] == "published"
    first, second = task["publishJobs"]
    assert first == failed  # the failed record stays in the history, unchanged
    assert (second["status"], second["triggerMode"], second["attemptCount"], second["retryOf"]) == (
        "succeeded",
        "manual",
        2,
        failed["id"],
    )
    assert second["snapshot"] == failed["snapshot"]
    assert second["draftMediaId"] in fake.drafts
    return second


def signed_in(app):
    create_admin()
    admin_client = app.test_client()
    login(admin_client)
    return admin_client


def test_platform_errcode_fails_the_job_and_the_retry_publishes(app, admin_client, agent_headers, fake):
    image = make_asset(app, 300, 200)
    task, _ = approved_article(app, admin_client, agent_headers, body=f"# 标题\n\n![图]({image['url']})\n")
    fake.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")

    failed = publish(admin_client, task).get_json()

    job = assert_failed(failed, "platform error 45004: description size out of limit")
    assert failed["version"] > task["version"] and failed["updatedAt"] > task["updatedAt"]
    assert fake.drafts == {}
    # the body was rendered for the platform before draft/add failed: the snapshot keeps what was sent
    [sent] = fake.requests_to("/draft/add")
    assert job["snapshot"]["bodyHtml"] == sent["json"]["articles"][0]["content"]
    assert image["url"] not in job["snapshot"]["bodyHtml"]
    retried = retry(admin_client, failed, job)
    second = assert_retried(retried, job, fake)
    assert len(fake.requests_to("/add_material")) == 1  # the cover uploaded by the failed attempt is reused
    assert [e["type"] for e in retried["timeline"]][-2:] == ["publish_failed", "publish_succeeded"]
    assert events_of(retried, "publish_succeeded")[0]["data"]["retryOf"] == job["id"]
    assert fake.drafts[second["draftMediaId"]]["articles"][0]["title"] == job["snapshot"]["title"]


def test_a_timeout_fails_the_job_and_the_retry_publishes(make_app, fake, agent_headers):
    app = make_app(**platform_settings(fake, WECHAT_TIMEOUT_SECONDS=1))
    admin_client = signed_in(app)
    task, _ = approved_article(app, admin_client, agent_headers)
    fake.hang_next("/draft/add", 3)

    failed = publish(admin_client, task).get_json()

    job = assert_failed(failed, "platform unreachable: timed out after 1 s (draft/add)")
    assert_retried(retry(admin_client, failed, job), job, fake)


def test_an_account_without_credentials_fails_the_job_until_they_are_configured(make_app, fake, agent_headers):
    app = make_app(**platform_settings(fake, accounts=("silicon-rise",)))
    admin_client = signed_in(app)
    task, _ = approved_article(app, admin_client, agent_headers, account="carbon-fitness")

    failed = publish(admin_client, task).get_json()

    job = assert_failed(failed, "account carbon-fitness has no platform credentials configured")
    assert fake.requests == []
    app.config.update(platform_settings(fake, accounts=("carbon-fitness",)))
    reload_settings(app)  # as a restart with the added credentials would
    retried = retry(admin_client, failed, job)
    second = assert_retried(retried, job, fake)
    assert fake.drafts[second["draftMediaId"]]["appid"] == ACCOUNTS["carbon-fitness"][0]


def test_an_oversize_body_fails_before_the_draft_call_and_a_retry_keeps_the_frozen_body(
    app, admin_client, agent_headers, fake
):
    task, _ = approved_article(app, admin_client, agent_headers, body="# 长文\n\n" + "很长的段落文字。" * 3000)

    failed = publish(admin_client, task).get_json()

    [job] = failed["publishJobs"]
    assert job["lastError"].startswith("rendered article is ")
    assert "the platform allows at most 20,000; shorten the body" in job["lastError"]
    assert_failed(failed, job["lastError"])
    assert fake.requests_to("/draft/add") == []
    # the retry publishes the frozen snapshot, so it fails the same way, as attempt 2
    retried = retry(admin_client, failed, job)
    assert retried["status"] == "approved"
    second = retried["publishJobs"][1]
    assert (second["status"], second["attemptCount"], second["retryOf"], second["lastError"]) == (
        "failed",
        2,
        job["id"],
        job["lastError"],
    )
    assert fake.requests_to("/draft/add") == []


def test_a_missing_image_file_fails_the_job_with_what_to_do(app, admin_client, agent_headers, fake):
    task, cover = approved_article(app, admin_client, agent_headers)
    Path(app.config["REVIEW_UPLOADS_PATH"], cover["url"].removeprefix("/uploads/")).unlink()

    failed = publish(admin_client, task).get_json()

    assert_failed(failed, f"image {cover['assetId']} (image.png) is missing from the uploads folder; upload it again")
    assert fake.requests_to("/draft/add") == []


def test_a_material_deleted_on_the_platform_is_uploaded_again_by_the_retry(app, admin_client, agent_headers, fake):
    cover = make_asset(app, 900, 500)
    first, _ = approved_article(app, admin_client, agent_headers, cover=cover)
    second, _ = approved_article(app, admin_client, agent_headers, cover=cover)
    old_media = publish(admin_client, first).get_json()["publishJobs"][0]
    old_media = fake.drafts[old_media["draftMediaId"]]["articles"][0]["thumb_media_id"]
    del fake.materials[old_media]  # someone deleted it in the platform's material library

    failed = publish(admin_client, second).get_json()
    job = assert_failed(failed, "platform error 40007: invalid media_id")
    retried = assert_retried(retry(admin_client, failed, job), job, fake)

    assert len(fake.requests_to("/add_material")) == 2
    assert fake.drafts[retried["draftMediaId"]]["articles"][0]["thumb_media_id"] != old_media


def test_retry_publishes_the_source_snapshot_not_the_current_selections(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)
    fake.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")
    job = publish(admin_client, task).get_json()["publishJobs"][0]
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        row.selections = {**row.selections, "title": "改过的标题"}
        row.save()

    retried = retry(admin_client, task, job)

    draft = fake.drafts[retried["publishJobs"][1]["draftMediaId"]]["articles"][0]
    assert draft["title"] == task["selections"]["title"] != "改过的标题"


@pytest.mark.parametrize("case", ["succeeded job", "task published", "unknown job", "job of another task"])
def test_retry_preconditions(app, admin_client, agent_headers, fake, case):
    task, _ = approved_article(app, admin_client, agent_headers)
    other, _ = approved_article(app, admin_client, agent_headers)
    fake.fail_next("/draft/add", errcode=45004, errmsg="description size out of limit")
    failed = publish(admin_client, task).get_json()["publishJobs"][0]
    if case == "succeeded job":
        target_task, job = task, retry(admin_client, task, failed)["publishJobs"][1]
        expected = (409, "invalid_state")
    elif case == "task published":
        retry(admin_client, task, failed)
        target_task, job, expected = task, failed, (409, "invalid_state")
    elif case == "unknown job":
        target_task, job, expected = task, {"id": "no-such-job"}, (404, "not_found")
    else:
        target_task, job, expected = other, failed, (404, "not_found")
    before = admin_client.get(f"/api/review/tasks/{target_task['id']}").get_json()
    drafts = len(fake.drafts)

    assert_error(admin_client.post(retry_url(target_task, job)), *expected)

    assert admin_client.get(f"/api/review/tasks/{target_task['id']}").get_json() == before
    assert len(fake.drafts) == drafts


def test_an_outcome_that_cannot_be_stored_leaves_the_draft_id_in_the_log(
    app, admin_client, agent_headers, fake, monkeypatch, caplog
):
    import peewee

    from models.review import PublishJob

    task, _ = approved_article(app, admin_client, agent_headers)
    real_save = PublishJob.save

    def disk_full(job, *args, **kwargs):
        if job.finished_at:  # the outcome, not the claim
            raise peewee.OperationalError("database or disk is full")
        return real_save(job, *args, **kwargs)

    monkeypatch.setattr(PublishJob, "save", disk_full)
    response = admin_client.post(f"/api/review/tasks/{task['id']}/publish-jobs")
    assert_error(response, 500, "storage_unavailable")
    [draft_id] = list(fake.drafts)
    assert any(draft_id in r.getMessage() and r.levelname == "ERROR" for r in caplog.records)
