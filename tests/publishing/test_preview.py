"""Phone preview (docs/api.md §12): the task's current draft sent to one follower through the platform."""

import pytest

from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.publishing import approved_article, events_of, publish

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def preview_url(task):
    return f"/api/review/tasks/{task['id']}/preview"


def published(app, admin_client, agent_headers):
    task, _ = approved_article(app, admin_client, agent_headers)
    return publish(admin_client, task).get_json()


def test_the_draft_goes_to_the_phone_and_the_timeline_says_so(app, admin_client, agent_headers, fake):
    task = published(app, admin_client, agent_headers)
    [job] = task["publishJobs"]
    answer = admin_client.post(preview_url(task), json={"wechatName": "reviewer-wx"})
    assert answer.status_code == 200, answer.get_json()
    assert fake.previews == [{"appid": "wx-silicon-rise", "towxname": "reviewer-wx", "media_id": job["draftMediaId"]}]
    [request] = fake.requests_to("message/mass/preview")
    assert request["json"] == {
        "towxname": "reviewer-wx",
        "mpnews": {"media_id": job["draftMediaId"]},
        "msgtype": "mpnews",
    }
    [event] = events_of(answer.get_json(), "preview_sent")
    assert (event["actor"], event["actorName"]) == ("admin", "admin")
    assert event["data"] == {
        "to": {"wechatName": "reviewer-wx"},
        "jobId": job["id"],
        "draftMediaId": job["draftMediaId"],
    }
    assert answer.get_json()["version"] == task["version"]  # a preview changes no content
    by_openid = admin_client.post(
        preview_url(task), json={"openId": "oAbC123"}, headers={"If-Match": f'"{task["version"]}"'}
    )
    assert by_openid.status_code == 200 and fake.previews[-1]["touser"] == "oAbC123"
    stale = admin_client.post(
        preview_url(task), json={"openId": "oAbC123"}, headers={"If-Match": f'"{task["version"] - 1}"'}
    )
    assert_error(stale, 412, "precondition_failed")
    assert len(fake.previews) == 2


def test_no_draft_yet_is_409(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)
    error = assert_error(admin_client.post(preview_url(task), json={"wechatName": "reviewer-wx"}), 409, "no_draft")
    assert "publish it first" in error["message"]
    assert fake.requests_to("message/mass/preview") == []


def test_a_refusal_is_502_with_the_platforms_errcode(app, admin_client, agent_headers, fake):
    task = published(app, admin_client, agent_headers)
    fake.unfollowed.add("stranger-wx")
    error = assert_error(
        admin_client.post(preview_url(task), json={"wechatName": "stranger-wx"}), 502, "platform_error"
    )
    assert error["details"]["errcode"] == 43004 and "subscribe" in error["details"]["errmsg"]
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert events_of(after, "preview_sent") == []


@pytest.mark.parametrize("body", [{}, {"wechatName": "a", "openId": "b"}, {"wechatName": ""}, {"phone": "1"}])
def test_exactly_one_recipient(app, admin_client, agent_headers, fake, body):
    task = published(app, admin_client, agent_headers)
    assert_error(admin_client.post(preview_url(task), json=body), 400, "validation_error")
    assert fake.requests_to("message/mass/preview") == []


def test_preview_needs_the_review_permission(app, client, agent_headers, fake):
    assert_error(client.post("/api/review/tasks/task_x/preview", json={"wechatName": "a"}), 401, "unauthorized")
    create_admin("triage", permissions="feedback")
    login(client, "triage")
    assert_error(client.post("/api/review/tasks/task_x/preview", json={"wechatName": "a"}), 403, "forbidden")


@pytest.mark.parametrize(
    "body",
    [
        {"wechatName": "al\nice"},
        {"wechatName": "\u202eecila\u0000"},
        {"wechatName": "alice\n"},
        {"openId": "oAbC\n"},
        {"openId": "o AbC"},
        {"openId": "oAbC\t"},
    ],
)
def test_recipients_outside_the_platforms_characters_are_refused(app, admin_client, agent_headers, fake, body):
    task = published(app, admin_client, agent_headers)
    error = assert_error(admin_client.post(preview_url(task), json=body), 400, "validation_error")
    assert set(error["details"]) == set(body)
    assert fake.requests_to("message/mass/preview") == []


def test_at_most_ten_previews_a_minute_per_task(app, admin_client, agent_headers, fake):
    task = published(app, admin_client, agent_headers)
    other = published(app, admin_client, agent_headers)
    for _ in range(10):
        assert admin_client.post(preview_url(task), json={"wechatName": "reviewer-wx"}).status_code == 200
    refused = admin_client.post(preview_url(task), json={"wechatName": "reviewer-wx"})
    assert_error(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert len(fake.requests_to("message/mass/preview")) == 10
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert len(events_of(after, "preview_sent")) == 10
    # Another task has a limit of its own.
    assert admin_client.post(preview_url(other), json={"wechatName": "reviewer-wx"}).status_code == 200
