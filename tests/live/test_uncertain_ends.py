"""The honest ends of going live (docs/api.md §18): a result that comes after the service gave up waiting
still settles it, and a submission that never left the service says so (it may be asked again)."""

from datetime import timedelta

import pytest

from models import OutboxMessage, PlatformToken, db
from models.live import TaskLive
from models.review import ReviewTask
from rules.ids import iso, utcnow
from services.live.worker import settle_interrupted
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.publishing import go_live_url, published_article, wait_for_live
from tests.helpers.review import article_payload, create_task

pytestmark = pytest.mark.both_stores


def _webhooks(event_type):
    with db.connection_context():
        return OutboxMessage.select().where(OutboxMessage.event_type == event_type).count()


def test_a_result_after_24_hours_without_one_still_settles_it(app, admin_client, agent_headers, fake, served_url):
    fake.withhold_events = True
    fake.publish_seconds = 3600  # the platform keeps saying "publishing"
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    publish_id = wait_for_live(admin_client, task, statuses=("publishing",))["live"]["publishId"]
    # A day and an hour later, the next poll still hears "publishing": the service stops waiting.
    with db.connection_context():
        TaskLive.update(submitted_at=iso(utcnow() - timedelta(hours=25)), next_poll_at=iso(utcnow())).execute()
    given_up = wait_for_live(admin_client, task)["live"]
    assert given_up["status"] == "failed" and "no result within 24 hours" in given_up["failReason"]
    assert _webhooks("review_task.live_failed") == 1
    # Then the platform's word comes after all: the article is live, and the agent hears it.
    with fake._lock:
        fake.publishes[publish_id].update(
            status=0, article_id="ARTICLE_LATE", article_url=f"{fake.base_url}/s/ARTICLE_LATE"
        )
    assert fake.push_publish_event(publish_id) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    assert (live["status"], live["articleId"], live["failReason"]) == ("live", "ARTICLE_LATE", None), live
    assert _webhooks("review_task.live") == 1
    # A repeat of it changes nothing more.
    assert fake.push_publish_event(publish_id) == (200, "success")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"] == live


def test_a_submission_that_never_left_says_nothing_reached_the_platform(
    app, admin_client, agent_headers, fake, served_url
):
    task = published_article(app, admin_client, agent_headers)
    with db.connection_context():
        PlatformToken.delete().execute()  # the next call needs a new token, which the platform refuses
    fake.fail_next("stable_token", errcode=40125, errmsg="invalid appsecret")
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "failed"
    assert "nothing reached the platform" in live["failReason"] and "may have been submitted" not in live["failReason"]
    assert "40125" in live["failReason"]
    assert fake.requests_to("freepublish/submit") == []
    admin_client.set_cookie("review_lang", "zh-CN")
    assert "平台没有收到" in admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    # Asked again once the platform takes the credentials, it goes live.
    fake.publish_seconds = 0.1
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    assert wait_for_live(admin_client, task)["live"]["status"] == "live"


def test_a_late_failure_after_24_hours_tells_its_reason_once_more(app, admin_client, agent_headers, fake, served_url):
    fake.withhold_events = True
    fake.publish_seconds = 3600
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    publish_id = wait_for_live(admin_client, task, statuses=("publishing",))["live"]["publishId"]
    with db.connection_context():
        TaskLive.update(submitted_at=iso(utcnow() - timedelta(hours=25)), next_poll_at=iso(utcnow())).execute()
    assert "no result within 24 hours" in wait_for_live(admin_client, task)["live"]["failReason"]
    with fake._lock:
        fake.publishes[publish_id]["status"] = 4
    assert fake.push_publish_event(publish_id) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    assert live["status"] == "failed" and "refused by the platform's review" in live["failReason"]
    with db.connection_context():
        told = [
            m.payload["data"]["failReason"]
            for m in OutboxMessage.select()
            .where(OutboxMessage.event_type == "review_task.live_failed")
            .order_by(OutboxMessage.id)
        ]
    assert len(told) == 2 and told[-1] == live["failReason"], told
    assert fake.push_publish_event(publish_id) == (200, "success")  # the same again: nothing more
    assert _webhooks("review_task.live_failed") == 2


@pytest.mark.parametrize(("timeout", "settled"), [(20.0, True), (600.0, False)])
def test_a_submission_elsewhere_is_given_up_only_after_its_calls_could_have_ended(make_app, timeout, settled):
    """A submission of a process on another host (no sign of life), begun 11 minutes ago: with the default
    WECHAT_TIMEOUT_SECONDS its calls ended long ago, and it is failed as uncertain; with calls of up to
    20 minutes it may still be under way, and it is left alone."""
    app = make_app(WECHAT_TIMEOUT_SECONDS=timeout)
    task = create_task(app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload())
    began = iso(utcnow() - timedelta(minutes=11))
    elsewhere = '{"host": "another-host", "pidns": "pid:[1]", "pid": 4242}'
    with db.connection_context():
        pk = ReviewTask.get(ReviewTask.task_id == task["id"]).id
        TaskLive.create(
            task=pk,
            account="silicon-rise",
            draft_media_id="media",
            status="submitting",
            owner=elsewhere,
            submitted_at=began,
            at=began,
            created_at=began,
            updated_at=began,
        )
        settle_interrupted(app.extensions["settings"])
        status = TaskLive.get(TaskLive.task == pk).status
    assert status == ("failed" if settled else "submitting")
