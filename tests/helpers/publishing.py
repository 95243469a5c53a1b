"""The two platform accounts the tests configure and the builders of approved tasks and publishes
(the fake platform itself is the `fake` fixture of tests/conftest.py)."""

import base64
from contextlib import nullcontext
from datetime import timedelta

from fakeplatform.freepublish import beijing_day, encoding_aes_key
from models import db
from models.platform import PlatformUpload
from tests.helpers.review import (
    approve_article,
    approve_image_post,
    article_payload,
    body_option,
    create_task,
    decision_url,
    image_post_payload,
    make_asset,
)
from tests.helpers.waiting import wait_for

ACCOUNTS = {
    "silicon-rise": ("wx-silicon-rise", "secret-silicon-rise-123"),
    "carbon-fitness": ("wx-carbon-fitness", "secret-carbon-fitness-456"),
}
# The agent webhook secret of the statistics tests (tests/stats/).
STATS_SECRET = "whsec_" + base64.b64encode(b"stats-events-secret-0123456789ab").decode()
# silicon-rise's server URL token and EncodingAESKey in the going-live tests (tests/live/).
LIVE_TOKEN = "event-token-silicon-rise"
LIVE_AES_KEY = encoding_aes_key()
ARTICLE_KEYS = {"title", "author", "digest", "content", "thumb_media_id"}


SNAPSHOT_KEYS = {
    "title",
    "author",
    "summary",
    "themeTemplate",
    "themeConfig",
    "bodyMarkdown",
    "bodyHtml",
    "bodyImages",
    "coverImage",
    "sourceBodyCandidate",
    "bodyEditedFromCandidate",
}


def platform_settings(fake, accounts=tuple(ACCOUNTS), **extra):
    settings = {"WECHAT_API_BASE": fake.base_url, "WECHAT_TIMEOUT_SECONDS": 5}
    for account in accounts:
        prefix = "WECHAT_" + account.upper().replace("-", "_")
        settings[prefix + "_APPID"], settings[prefix + "_SECRET"] = ACCOUNTS[account]
    settings.update(extra)
    return settings


def publish_url(task):
    return f"/api/review/tasks/{task['id']}/publish-jobs"


def retry_url(task, job):
    return f"/api/review/tasks/{task['id']}/publish-jobs/{job['id']}/retry"


def approved_article(
    app,
    admin_client,
    agent_headers,
    body=None,
    action="approve_without_publish",
    account="silicon-rise",
    cover=None,
    body_draft=None,
    context=None,
):
    """An approved article task whose body is `body` (Markdown, may link assets), created with the agent's
    `context` if given; returns (task, cover)."""
    cover = cover or make_asset(app, 900, 500)
    payload = article_payload(publicAccount=account, **({"context": context} if context is not None else {}))
    if body is not None:
        payload["candidates"]["bodyOptions"] = [body_option("opt-a", body)]
    task = create_task(admin_client, agent_headers, payload)
    decision = approve_article(task, cover, action=action)
    if body_draft is not None:
        decision["bodyDraft"] = {
            "sourceBodyCandidateId": "opt-a",
            "markdown": decision["selections"]["body"],
            **body_draft,
        }
    response = admin_client.post(decision_url(task), json=decision)
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    return response.get_json(), cover


def approved_image_post(app, admin_client, agent_headers, images, action="approve_without_publish", **selections):

    task = create_task(admin_client, agent_headers, image_post_payload(images))
    decision = approve_image_post(images, action=action)
    decision["selections"].update(selections)
    response = admin_client.post(decision_url(task), json=decision)
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    return response.get_json()


def publish(admin_client, task, status=200, **kwargs):
    response = admin_client.post(publish_url(task), **kwargs)
    assert response.status_code == status, response.get_data(as_text=True)[:800]
    return response


def file_bytes(app, asset):
    from pathlib import Path

    return (Path(app.config["REVIEW_UPLOADS_PATH"]) / asset["url"].removeprefix("/uploads/")).read_bytes()


def uploadimg_urls(account="silicon-rise"):
    with db.connection_context():
        return {
            row.asset_id: row.url
            for row in PlatformUpload.select().where(
                (PlatformUpload.kind == "uploadimg") & (PlatformUpload.account == account)
            )
        }


def only_draft(fake, media_id):
    assert list(fake.drafts) == [media_id]
    return fake.drafts[media_id]["articles"]


def events_of(task, type_):
    return [event for event in task["timeline"] if event["type"] == type_]


def go_live_url(task):
    return f"/api/review/tasks/{task['id']}/go-live"


def published_article(app, admin_client, agent_headers, account="silicon-rise", context=None):
    """An article task published as a platform draft (approve_and_publish); returns the task JSON."""
    task, _cover = approved_article(
        app, admin_client, agent_headers, action="approve_and_publish", account=account, context=context
    )
    assert task["status"] == "published", task["publishJobs"]
    return task


def wait_for_live(admin_client, task, statuses=("live", "failed"), seconds=15):
    """The task once its `live.status` is one of `statuses` (the live worker and events move it)."""
    return wait_for(
        lambda: admin_client.get(f"/api/review/tasks/{task['id']}").get_json(),
        lambda current: current["live"] and current["live"]["status"] in statuses,
        seconds,
        f"going live not {' or '.join(statuses)}",
    )


def live_task(app, admin_client, agent_headers, days_ago=3, fake=None, context=None):
    """A task live on the fake platform since `days_ago` days (figures are kept only for days since then;
    with `fake`, the platform publishes it that day too, so datacube answers for it then); `context`: the
    agent's, as created."""
    task = published_article(app, admin_client, agent_headers, context=context)
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    live = wait_for_live(admin_client, task)
    assert live["live"]["status"] == "live", live["live"]
    went_live_days_ago(task["id"], days_ago, fake)
    return live


def went_live_days_ago(task_id, days, fake=None, database=None):
    """The task went live `days` ago in the store (`database`: another one than the tests' app's, e.g. the
    `python app.py` processes' of tests/helpers/live_processes.py) and (with `fake`) on the platform:
    datacube's publish day."""
    from models import ReviewTask, TaskLive
    from rules.ids import iso, utcnow

    bound = nullcontext() if database is None else database.bind_ctx([ReviewTask, TaskLive])
    with bound, (db if database is None else database).connection_context():
        task_pk = ReviewTask.get(ReviewTask.task_id == task_id).id
        TaskLive.update(live_at=iso(utcnow() - timedelta(days=days))).where(TaskLive.task == task_pk).execute()
        msg_data_id = TaskLive.get(TaskLive.task == task_pk).msg_data_id
    if fake is not None:
        fake.set_publish_day(str(msg_data_id).partition("_")[0], beijing_day(-days))


def yesterday(app):
    """The platform's yesterday (Beijing's, whatever the app's REVIEW_TIME_ZONE): the last day it has figures of."""
    return beijing_day(-1)
