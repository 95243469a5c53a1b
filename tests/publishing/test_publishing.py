"""Publishing article drafts against the fake platform over real HTTP (publish-jobs; docs/api.md §5).

The fixtures (`fake`, `platform_app`) are in tests/conftest.py, the builders in tests/helpers/publishing.py.
"""

import pytest

from models import db
from services.rendering import render_article
from tests.helpers.publishing import (
    ACCOUNTS,
    ARTICLE_KEYS,
    SNAPSHOT_KEYS,
    approved_article,
    events_of,
    file_bytes,
    only_draft,
    platform_settings,
    publish,
    uploadimg_urls,
)
from tests.helpers.review import make_asset

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


# ---- article drafts -----------------------------------------------------------------------------
def test_article_draft_holds_exactly_the_platform_fields_and_the_rendered_body(app, admin_client, agent_headers, fake):
    first, second = make_asset(app, 300, 200), make_asset(app, 320, 240)
    body = (
        f"# 芯片\n\n第一段，见[官网](https://example.com/chips)。\n\n![图一]({first['url']})\n\n"
        f"中间的文字\n\n![图二]({second['url']})\n\n```python\nprint('hi')\n```\n"
    )
    task, cover = approved_article(app, admin_client, agent_headers, body=body)
    version = task["version"]

    response = publish(admin_client, task)
    published = response.get_json()

    assert published["status"] == "published"
    assert response.headers["ETag"] == f'"{published["version"]}"'
    assert published["version"] > version
    [job] = published["publishJobs"]
    assert (job["status"], job["triggerMode"], job["attemptCount"], job["taskId"]) == (
        "succeeded",
        "manual",
        1,
        task["id"],
    )
    assert "lastError" not in job and "retryOf" not in job
    assert job["queuedAt"] <= job["startedAt"] <= job["finishedAt"]
    [article] = only_draft(fake, job["draftMediaId"])
    assert set(article) == ARTICLE_KEYS
    selections = published["selections"]
    assert (article["title"], article["author"], article["digest"]) == (
        selections["title"],
        selections["author"],
        selections["summary"],
    )
    # the cover became a permanent material holding the cover's bytes
    assert fake.materials[article["thumb_media_id"]]["data"] == file_bytes(app, cover)
    # body images went through uploadimg; the content is the snapshot's Markdown rendered with those URLs
    urls = uploadimg_urls()
    assert set(urls) == {first["assetId"], second["assetId"]}
    for asset in (first, second):
        assert fake.body_images[urls[asset["assetId"]].rsplit("/", 1)[1]] == file_bytes(app, asset)
    snapshot = job["snapshot"]
    expected = render_article(
        body,
        "default",
        snapshot["themeConfig"],
        {first["url"]: urls[first["assetId"]], second["url"]: urls[second["assetId"]]},
    )
    assert article["content"] == expected
    assert "/uploads/" not in article["content"] and "<style" not in article["content"]
    assert "class=" not in article["content"]
    # the snapshot's bodyHtml is what the platform was sent, with the platform's image URLs
    assert set(snapshot) == SNAPSHOT_KEYS
    assert snapshot["bodyHtml"] == article["content"]
    assert snapshot["bodyMarkdown"] == body and snapshot["coverImage"] == cover["url"]
    assert (snapshot["sourceBodyCandidate"], snapshot["bodyEditedFromCandidate"]) == (body, False)
    assert snapshot["themeTemplate"] == "default"
    assert {"--primary-color", "--font-size", "--line-height", "--font-family"} <= set(
        snapshot["themeConfig"]["cssVariables"]
    )
    [event] = events_of(published, "publish_succeeded")
    assert event["actor"] == "admin" and event["actorName"] == "admin"
    assert event["data"]["jobId"] == job["id"] and event["data"]["draftMediaId"] == job["draftMediaId"]
    # the task as read afterwards says the same
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json() == published


def test_theme_template_and_account_overrides_reach_snapshot_and_draft(make_app, fake, agent_headers):
    from tests.helpers.app import create_admin, login

    app = make_app(**platform_settings(fake, WECHAT_THEME_OVERRIDES={"silicon-rise": {"--primary-color": "#c0ffee"}}))
    create_admin()
    admin_client = app.test_client()
    login(admin_client)
    task, _cover = approved_article(
        app,
        admin_client,
        agent_headers,
        body="# 标题\n\n**重点**内容",
        body_draft={"themeTemplate": "tech-blue", "themeConfig": {"cssVariables": {"--font-size": "17px"}}},
    )

    job = publish(admin_client, task).get_json()["publishJobs"][0]

    variables = job["snapshot"]["themeConfig"]["cssVariables"]
    assert job["snapshot"]["themeTemplate"] == "tech-blue"
    assert (variables["--primary-color"], variables["--font-size"]) == ("#c0ffee", "17px")
    [article] = fake.drafts[job["draftMediaId"]]["articles"]
    assert "#c0ffee" in article["content"] and "17px" in article["content"]


def test_token_is_fetched_once_cached_and_refreshed_when_the_platform_rejects_it(
    app, admin_client, agent_headers, fake
):
    tasks = [approved_article(app, admin_client, agent_headers)[0] for _ in range(3)]

    publish(admin_client, tasks[0])
    publish(admin_client, tasks[1])
    assert len(fake.requests_to("/stable_token")) == 1  # the second publish used the cached token

    fake.expire_tokens()
    published = publish(admin_client, tasks[2]).get_json()

    assert published["status"] == "published"
    calls = [r["json"] for r in fake.requests_to("/stable_token")]
    assert [call["force_refresh"] for call in calls] == [False, False]  # expired: normal mode has a new one
    assert len(fake.drafts) == 3


def test_uploads_are_reused_for_the_same_asset_on_the_same_account(app, admin_client, agent_headers, fake):
    cover, inline = make_asset(app, 900, 500), make_asset(app, 200, 200)
    body = f"正文\n\n![图]({inline['url']})"
    first, _ = approved_article(app, admin_client, agent_headers, body=body, cover=cover)
    second, _ = approved_article(app, admin_client, agent_headers, body=body, cover=cover)

    one = publish(admin_client, first).get_json()["publishJobs"][0]
    two = publish(admin_client, second).get_json()["publishJobs"][0]

    assert len(fake.requests_to("/add_material")) == 1
    assert len(fake.requests_to("/uploadimg")) == 1
    drafts = [fake.drafts[job["draftMediaId"]]["articles"][0] for job in (one, two)]
    assert drafts[0]["thumb_media_id"] == drafts[1]["thumb_media_id"]
    assert drafts[0]["content"] == drafts[1]["content"]


def test_a_synced_material_of_the_same_account_is_used_without_uploading(app, admin_client, agent_headers, fake):
    from services.assets import sync_platform_images
    from services.platform.client import client_for
    from tests.helpers.review import png_bytes

    fake.seed_image_material("cover.png", png_bytes(900, 500), appid=ACCOUNTS["silicon-rise"][0])
    with db.connection_context():
        sync_platform_images(client_for("silicon-rise", app.extensions["settings"]), "silicon-rise")
        from models import Asset

        synced = Asset.get(Asset.platform_account == "silicon-rise")
        synced.width, synced.height = 900, 500  # sync does not download; the cover check needs the size
        synced.save()
    task, _ = approved_article(app, admin_client, agent_headers, cover={"assetId": synced.asset_id})

    job = publish(admin_client, task).get_json()["publishJobs"][0]

    assert fake.requests_to("/add_material") == []
    assert fake.drafts[job["draftMediaId"]]["articles"][0]["thumb_media_id"] == synced.platform_media_id


# ---- updating an existing draft -----------------------------------------------------------------
def _approve_again(task):
    """A published task back in approved (no route does this today; the draft update path needs it)."""
    from models.review import ReviewTask

    with db.connection_context():
        ReviewTask.update(status="approved").where(ReviewTask.task_id == task["id"]).execute()


def test_a_task_holding_a_succeeded_draft_updates_that_draft(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)
    first = publish(admin_client, task).get_json()["publishJobs"][0]
    _approve_again(task)

    again = publish(admin_client, task).get_json()

    second = again["publishJobs"][1]
    assert (second["status"], second["draftMediaId"]) == ("succeeded", first["draftMediaId"])
    [update] = fake.requests_to("/draft/update")
    assert set(update["json"]) == {"media_id", "index", "articles"}
    assert (update["json"]["media_id"], update["json"]["index"]) == (first["draftMediaId"], 0)
    assert set(update["json"]["articles"]) == ARTICLE_KEYS
    assert len(fake.requests_to("/draft/add")) == 1 and list(fake.drafts) == [first["draftMediaId"]]


def test_an_update_answered_40007_falls_back_to_a_new_draft(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)
    first = publish(admin_client, task).get_json()["publishJobs"][0]
    del fake.drafts[first["draftMediaId"]]  # deleted by someone in the platform's web console
    _approve_again(task)

    again = publish(admin_client, task).get_json()

    second = again["publishJobs"][1]
    assert second["status"] == "succeeded" and again["status"] == "published"
    assert second["draftMediaId"] != first["draftMediaId"]
    assert list(fake.drafts) == [second["draftMediaId"]]
    assert len(fake.requests_to("/draft/update")) == 1 and len(fake.requests_to("/draft/add")) == 2
