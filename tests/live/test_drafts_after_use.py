"""Drafts after use (docs/api.md §12, §21): the platform removes a draft once it is published
or mass-sent, and so does the fake. Every path that reuses the task's `draftMediaId` afterwards is driven
against that."""

from tests.helpers.app import assert_error
from tests.helpers.editions import propose
from tests.helpers.publishing import go_live_url, published_article, wait_for_live
from tests.helpers.waiting import wait_until


def preview_url(task):
    return f"/api/review/tasks/{task['id']}/preview"


def live(app, admin_client, agent_headers, fake):
    task = published_article(app, admin_client, agent_headers)
    media_id = task["publishJobs"][-1]["draftMediaId"]
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    assert wait_for_live(admin_client, task)["live"]["status"] == "live"
    wait_until(lambda: media_id not in fake.drafts, 15, "the fake kept the published draft")
    return task, media_id


def test_a_preview_after_going_live_says_the_draft_is_gone(app, admin_client, agent_headers, fake, served_url):
    task, _media_id = live(app, admin_client, agent_headers, fake)
    error = assert_error(admin_client.post(preview_url(task), json={"wechatName": "reviewer-wx"}), 409, "draft_gone")
    assert "removes a draft once it is published or sent" in error["message"], error
    assert error["details"] == {"draftMediaId": _media_id}
    assert fake.previews == []


def test_an_edition_holding_a_task_that_went_live_alone_says_its_draft_is_gone(
    app, admin_client, agent_headers, fake, served_url
):
    other = published_article(app, admin_client, agent_headers)
    task = published_article(app, admin_client, agent_headers)
    edition = propose(admin_client, [other, task])
    media_id = task["publishJobs"][-1]["draftMediaId"]
    assert (
        admin_client.post(go_live_url(task), json={}).status_code == 202
    )  # only a scheduled or sending edition holds it back
    assert wait_for_live(admin_client, task)["live"]["status"] == "live"
    wait_until(lambda: media_id not in fake.drafts, 15, "the fake kept the published draft")
    answer = admin_client.post(f"/api/editions/{edition['id']}/preview", json={"wechatId": "reviewer-wx"})
    error = assert_error(answer, 409, "draft_gone")
    assert error["details"] == {"taskIds": [task["id"]]} and task["id"] in error["message"]
    assert fake.previews == []
