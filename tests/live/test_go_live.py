"""Going live now or at a time, through the platform's event or polling (docs/api.md §18)."""

from datetime import UTC, datetime, timedelta

import pytest

from models import OutboxMessage, db
from tests.helpers.app import assert_error
from tests.helpers.publishing import go_live_url, published_article, wait_for_live
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores


def _outbox(event_type):
    with db.connection_context():
        return [m.payload for m in OutboxMessage.select().where(OutboxMessage.event_type == event_type)]


def test_going_live_now_reaches_live_with_the_article_url_through_the_event(
    app, admin_client, agent_headers, fake, served_url
):
    task = published_article(app, admin_client, agent_headers)
    assert task["live"] is None
    fake.publish_seconds = 0.2  # before the request: the worker may submit at once
    answer = admin_client.post(go_live_url(task), json={})
    assert answer.status_code == 202, answer.get_json()
    assert answer.get_json()["live"]["status"] in ("scheduled", "submitting", "publishing")
    assert answer.get_json()["status"] == "published"
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "live", live
    [publish] = fake.publishes.values()  # the platform writes its address in plain http; shown as https
    assert live["articleUrl"] == "https://" + publish["article_url"].removeprefix("http://") and live["articleId"]
    assert len(fake.requests_to("freepublish/submit")) == 1
    assert fake.requests_to("freepublish/submit")[0]["json"] == {"media_id": task["publishJobs"][-1]["draftMediaId"]}
    # The platform's event was answered (whether it or the first poll, 0.3 s after the submission, came first).
    wait_until(lambda: fake.event_answers, 15, "no event pushed")
    assert [answer[1:] for answer in fake.event_answers] == [(200, "success")]
    [webhook] = _outbox("review_task.live")
    assert webhook["data"] == {
        "taskId": task["id"],
        "articleUrl": live["articleUrl"],
        "articleId": live["articleId"],
        "failReason": None,
        "via": "freepublish",
        "editionId": None,
    }
    # What readers open is the draft's article (the fake serves it at its own address).
    import requests

    page = requests.get(f"{fake.base_url}/s/{live['articleId']}", timeout=5)
    assert page.status_code == 200 and task["selections"]["title"] in page.text


def test_with_events_withheld_polling_finds_the_result(app, admin_client, agent_headers, fake, served_url):
    fake.withhold_events = True
    fake.publish_seconds = 0.1
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert fake.event_answers == []
    assert len(fake.requests_to("freepublish/get")) >= 1
    # freepublish/get answers the address in plain http, as the platform does (docs/api.md §18): kept as https
    # on the task and in the agent's webhook (issue 53, 1).
    [publish] = fake.publishes.values()
    assert publish["article_url"].startswith("http://mp.weixin.qq.com/s?__biz=")
    shown = "https://" + publish["article_url"].removeprefix("http://")
    assert (live["status"], live["articleUrl"]) == ("live", shown)
    wait_until(lambda: _outbox("review_task.live"), 15, "no review_task.live webhook")
    assert _outbox("review_task.live")[0]["data"]["articleUrl"] == shown


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (2, "original-content declaration"),
        (3, "general failure"),
        (4, "refused by the platform's review"),
        (5, "deleted by the account"),
        (6, "banned by the platform"),
    ],
)
def test_each_failure_status_gives_its_reason(app, admin_client, agent_headers, fake, served_url, status, words):
    fake.finish_next_publish_with(status)
    fake.publish_seconds = 0.1
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "failed" and words in live["failReason"], live
    assert live["articleUrl"] is None
    [webhook] = _outbox("review_task.live_failed")
    assert webhook["data"]["failReason"] == live["failReason"]


@pytest.mark.parametrize(
    ("errcode", "words"),
    [
        (48001, "verified account"),
        (53503, "failed the platform's check"),
        (53504, "back office"),
        (53505, "back office"),
    ],
)
def test_a_refused_submission_gives_the_meaning_of_its_code(app, admin_client, agent_headers, fake, errcode, words):
    fake.fail_next("freepublish/submit", errcode=errcode, errmsg="api unauthorized")
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "failed" and words in live["failReason"] and str(errcode) in live["failReason"], live
    assert live["publishId"] is None


def test_scheduled_going_live_waits_for_its_time(app, admin_client, agent_headers, fake, served_url):
    task = published_article(app, admin_client, agent_headers)
    at = datetime.now(UTC) + timedelta(seconds=2)
    answer = admin_client.post(go_live_url(task), json={"at": at.astimezone().isoformat()})
    assert answer.status_code == 202
    live = answer.get_json()["live"]
    assert live["status"] == "scheduled"
    assert abs(datetime.fromisoformat(live["at"].replace("Z", "+00:00")) - at) < timedelta(milliseconds=2)
    done = wait_for_live(admin_client, task)
    assert done["live"]["status"] == "live"
    submitted = fake.requests_to("freepublish/submit")
    assert len(submitted) == 1 and submitted[0]["time"] >= at.timestamp()  # not before its time


def test_a_schedule_can_be_cancelled_and_asked_again(app, admin_client, agent_headers, fake):
    task = published_article(app, admin_client, agent_headers)
    at = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    assert admin_client.post(go_live_url(task), json={"at": at}).status_code == 202
    assert_error(admin_client.post(go_live_url(task), json={}), 409, "invalid_state")
    canceled = admin_client.delete(go_live_url(task))
    assert canceled.status_code == 200 and canceled.get_json()["live"]["status"] == "canceled"
    assert_error(admin_client.delete(go_live_url(task)), 409, "invalid_state")
    again = admin_client.post(go_live_url(task), json={"at": at})
    assert again.status_code == 202 and again.get_json()["live"]["status"] == "scheduled"
    assert fake.requests_to("freepublish/submit") == []


@pytest.mark.parametrize(
    ("at", "field_words"),
    [
        (timedelta(minutes=-5), "in the past"),
        (timedelta(days=31), "30 days ahead"),
        ("2026-12-01T08:00:00", "timezone"),  # an offset is required
        ("tomorrow", "datetime"),
    ],
    ids=["past", "far", "no-offset", "not-a-time"],
)
def test_bad_times_are_refused_and_change_nothing(app, admin_client, agent_headers, at, field_words):
    if isinstance(at, timedelta):  # from now, when the test runs (the ids stay the same on every worker)
        at = (datetime.now(UTC) + at).isoformat()
    task = published_article(app, admin_client, agent_headers)
    error = assert_error(admin_client.post(go_live_url(task), json={"at": at}), 400, "validation_error")
    assert field_words in " ".join(error["details"]["at"]).lower() + error["message"].lower()
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"] is None


def test_only_a_published_task_goes_live_and_only_admins_ask(app, admin_client, client, agent_headers):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, article_payload([cover["url"]]))
    assert_error(admin_client.post(go_live_url(task), json={}), 409, "invalid_state")
    approved = admin_client.post(decision_url(task), json=approve_article(task, cover)).get_json()
    assert approved["status"] == "approved"
    assert_error(admin_client.post(go_live_url(approved), json={}), 409, "invalid_state")
    assert_error(client.post(go_live_url(task), json={}, headers=agent_headers), 401, "unauthorized")
    assert_error(admin_client.post("/api/review/tasks/nope/go-live", json={}), 404, "not_found")


def test_a_poll_refused_with_45009_waits_for_the_next_delay(make_app, fake):
    """docs/api.md §18: 45009 (the day's quota) is not a result; the next poll on the schedule finds it."""
    from tests.helpers.app import AGENT_TOKEN, built_app, signed_in_admin
    from tests.helpers.publishing import platform_settings

    fake.withhold_events = True
    fake.publish_seconds = 0.05
    fake.fail_next("freepublish/get", errcode=45009, errmsg="reach max api daily quota limit", times=2)
    with built_app(
        make_app,
        **platform_settings(fake),
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.2,0.2,0.2,0.2",
    ) as application:
        admin = signed_in_admin(application)
        task = published_article(application, admin, {"x-review-agent-token": AGENT_TOKEN})
        admin.post(go_live_url(task), json={})
        live = wait_for_live(admin, task)["live"]
    assert live["status"] == "live" and live["articleUrl"]
    assert len(fake.requests_to("freepublish/get")) == 3  # two refused, the third answered
