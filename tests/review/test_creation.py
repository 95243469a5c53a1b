"""Task creation by the agent: every rule, idempotency, size limit, auth, reads (spec + docs/api.md §4)."""

import copy
import json

import pytest
import requests

from models import IdempotencyKey, ReviewTask, db
from tests.helpers.app import assert_error
from tests.helpers.review import article_payload, body_option, create_task, image_post_payload, live_server, make_asset

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

URL = "/api/review/agent/tasks"


def task_count():
    with db.connection_context():
        return ReviewTask.select().count()


def test_article_is_created_pending_with_its_first_event(app, client, admin_client, agent_headers):
    cover = make_asset(app)
    payload = article_payload([cover["url"]], externalContentId="agent-42")
    response = client.post(URL, json=payload, headers=agent_headers)
    assert response.status_code == 201
    task = response.get_json()
    assert task["status"] == "pending_review" and task["contentType"] == "article"
    assert task["candidates"] == payload["candidates"]  # outline "引言|正文|结语" kept as one string
    assert task["candidates"]["bodyOptions"][0]["outline"] == "引言|正文|结语"
    assert task["externalContentId"] == "agent-42"
    assert task["publishJobs"] == [] and task["version"] == 1
    assert [(e["type"], e["actor"], e["actorName"]) for e in task["timeline"]] == [("task_created", "agent", None)]
    assert set(task["timeline"][0]) == {"id", "type", "at", "actor", "actorName", "data"}
    assert task["createdAt"].endswith("Z") and len(task["createdAt"]) == 24
    for absent in ("selections", "manualOverrides", "bodyDraft", "rejectedElements", "lockedSelections"):
        assert absent not in task
    assert response.headers["ETag"] == '"1"'
    assert response.headers["Location"] == f"{URL}/{task['id']}"
    admin_read = admin_client.get(f"/api/review/tasks/{task['id']}")
    agent_read = client.get(f"{URL}/{task['id']}", headers=agent_headers)
    assert admin_read.get_json() == task == agent_read.get_json()
    assert admin_read.headers["ETag"] == agent_read.headers["ETag"] == '"1"'


def test_image_post_is_created_with_candidate_comment_settings_unchanged(app, client, agent_headers):
    images = [make_asset(app, 600, 800) for _ in range(2)]
    payload = image_post_payload(images)
    task = create_task(client, agent_headers, payload)
    assert task["contentType"] == "image_post" and task["status"] == "pending_review"
    assert task["candidates"]["commentSettings"] == [{"needOpenComment": False, "onlyFansCanComment": True}]
    assert "selections" not in task


def _article(app):
    return article_payload()


def _image_post(app):
    return image_post_payload([make_asset(app, 600, 800)])


def mutate(base, change):
    def build(app):
        payload = copy.deepcopy(base(app))
        change(payload, app)
        return payload

    return build


def _set(path, value):
    def change(payload, _app):
        *parents, last = path.split(".")
        target = payload
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value

    return change


def _drop(path):
    def change(payload, _app):
        *parents, last = path.split(".")
        target = payload
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        del target[last]

    return change


CASES = {
    "missing publicAccount": (_article, _drop("publicAccount"), "publicAccount"),
    "unknown publicAccount": (_article, _set("publicAccount", "moon-base"), "publicAccount"),
    "missing topic": (_article, _drop("topic"), "topic"),
    "blank topic": (_article, _set("topic", "  "), "topic"),
    "unknown contentType": (_article, _set("contentType", "video"), "contentType"),
    "no candidate content": (_article, _set("candidates", {}), "candidates"),
    "empty candidate lists": (_article, _set("candidates", {"titles": [], "bodyOptions": []}), "candidates"),
    "plain string body options": (_article, _set("candidates.bodyOptions", ["正文"]), "candidates.bodyOptions.0"),
    "outline as array": (
        _article,
        _set("candidates.bodyOptions.0.outline", ["a", "b"]),
        "candidates.bodyOptions.0.outline",
    ),
    "empty outline": (_article, _set("candidates.bodyOptions.0.outline", ""), "candidates.bodyOptions.0.outline"),
    "missing focuses": (_article, _drop("candidates.bodyOptions.1.focuses"), "candidates.bodyOptions.1.focuses"),
    "missing content": (_article, _drop("candidates.bodyOptions.0.content"), "candidates.bodyOptions.0.content"),
    "content too long": (
        _article,
        _set("candidates.bodyOptions.0.content", "x" * 200_001),
        "candidates.bodyOptions.0.content",
    ),
    "duplicate option ids": (_article, _set("candidates.bodyOptions.1.id", "opt-a"), "candidates.bodyOptions.1.id"),
    "unknown body option field": (
        _article,
        _set("candidates.bodyOptions.0.tone", "warm"),
        "candidates.bodyOptions.0.tone",
    ),
    "themeTemplates": (_article, _set("candidates.themeTemplates", ["default"]), "candidates.themeTemplates"),
    "quickstart title": (_article, _set("title", "标题"), "title"),
    "quickstart attachments": (_article, _set("attachments", [{"kind": "image", "assetId": "x"}]), "attachments"),
    "article with descriptions": (_article, _set("candidates.descriptions", ["d"]), "candidates.descriptions"),
    "article with image groups": (_article, _set("candidates.imageGroups", []), "candidates.imageGroups"),
    "more than 50 titles": (_article, _set("candidates.titles", [f"t{i}" for i in range(51)]), "candidates.titles"),
    "empty title string": (_article, _set("candidates.titles", ["ok", ""]), "candidates.titles.1"),
    "externalContentId too long": (_article, _set("externalContentId", "x" * 129), "externalContentId"),
    "image_post without contentType": (_image_post, _drop("contentType"), "candidates.imageGroups"),
    "image_post with summaries": (_image_post, _set("candidates.summaries", ["s"]), "candidates.summaries"),
    "image_post with body options": (
        _image_post,
        _set("candidates.bodyOptions", [body_option("a", "b")]),
        "candidates.bodyOptions",
    ),
    "image_post without titles": (_image_post, _drop("candidates.titles"), "candidates.titles"),
    "image_post without descriptions": (_image_post, _set("candidates.descriptions", []), "candidates.descriptions"),
    "image_post without image groups": (_image_post, _drop("candidates.imageGroups"), "candidates.imageGroups"),
    "coverCrop in a group": (
        _image_post,
        _set("candidates.imageGroups.0.coverCrop", {"assetId": "x"}),
        "candidates.imageGroups.0.coverCrop",
    ),
    "group without images": (
        _image_post,
        _set("candidates.imageGroups.0.images", []),
        "candidates.imageGroups.0.images",
    ),
    "group image as url": (
        _image_post,
        _set("candidates.imageGroups.0.images", ["/uploads/review/a.png"]),
        "candidates.imageGroups.0.images.0",
    ),
    "group image unknown asset": (
        _image_post,
        _set("candidates.imageGroups.0.images.0.assetId", "nope"),
        "candidates.imageGroups.0.images.0.assetId",
    ),
    "comment settings as string": (
        _image_post,
        _set("candidates.commentSettings.0.needOpenComment", "yes"),
        "candidates.commentSettings.0.needOpenComment",
    ),
    "comment settings extra field": (
        _image_post,
        _set("candidates.commentSettings.0.default", True),
        "candidates.commentSettings.0.default",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_creation_rule_is_refused_with_a_dotted_path(app, client, agent_headers, name):
    base, change, path = CASES[name]
    payload = mutate(base, change)(app)
    error = assert_error(client.post(URL, json=payload, headers=agent_headers), 400, "validation_error")
    assert path in error["details"], error["details"]
    assert all(isinstance(m, str) for messages in error["details"].values() for m in messages)
    assert task_count() == 0


def test_unknown_image_group_asset_is_named_among_valid_ones(app, client, agent_headers):
    images = [make_asset(app, 600, 800), {"assetId": "missing-one"}, make_asset(app, 600, 800)]
    error = assert_error(
        client.post(URL, json=image_post_payload(images), headers=agent_headers), 400, "validation_error"
    )
    assert set(error["details"]) == {"candidates.imageGroups.0.images.1.assetId"}


def test_candidate_images_are_uploaded_assets_or_web_addresses(app, client, agent_headers):
    """docs/api.md §4's creation rule 4: local images are uploaded first. A local path that is no asset was stored
    and only showed the reviewer a broken image; a web address is still taken (and refused if selected)."""
    uploaded = make_asset(app, 900, 500)
    payload = article_payload(
        [
            uploaded["url"],
            "./cover.png",
            "file:///home/agent/cover.png",
            "https://cdn.example.com/c.png",
            "/uploads/review/nope.png",
            "//cdn.example.com/d.png",
        ]
    )
    payload["candidates"]["bodyImageCandidates"] = [
        {"placeholderId": "p1", "options": ["/uploads/library/nope.png", uploaded["url"]]}
    ]
    payload["candidates"]["bodyOptions"][1]["content"] = f"![a](./a.png)\n\n![b]({uploaded['url']})"
    before = task_count()
    error = assert_error(client.post(URL, json=payload, headers=agent_headers), 400, "validation_error")
    assert set(error["details"]) == {
        "candidates.coverImages.1",
        "candidates.coverImages.2",
        "candidates.coverImages.4",
        "candidates.bodyImageCandidates.0.options.0",
        "candidates.bodyOptions.1.content",
    }
    assert "'./a.png'" in error["details"]["candidates.bodyOptions.1.content"][0]
    assert "POST /api/assets/upload" in error["details"]["candidates.coverImages.1"][0]
    assert task_count() == before

    payload["candidates"]["coverImages"] = [uploaded["url"], "https://cdn.example.com/c.png"]
    payload["candidates"]["bodyImageCandidates"][0]["options"] = [uploaded["url"]]
    payload["candidates"]["bodyOptions"][1]["content"] = (
        f"![b]({uploaded['url']})\n\n![c](https://cdn.example.com/e.png)"
    )
    assert client.post(URL, json=payload, headers=agent_headers).status_code == 201


def test_bad_json_and_non_object_bodies(client, agent_headers):
    for data in ("{not json", "[1, 2]", ""):
        response = client.post(URL, data=data, headers={**agent_headers, "Content-Type": "application/json"})
        assert_error(response, 400, "validation_error")


def test_a_nul_in_any_text_is_refused_on_both_stores(client, agent_headers):
    """PostgreSQL's text holds no NUL: a topic "t\\u0000" was created on SQLite and a 500 on PostgreSQL (the
    write failed); now a 400 naming where it is, on both, and nothing is created."""
    for body, where in (
        ({**article_payload(), "topic": "t\u0000"}, "topic"),
        ({**article_payload(), "context": {"prompt": "p\u0000"}}, "context.prompt"),
    ):
        error = assert_error(
            client.post("/api/review/agent/tasks", json=body, headers=agent_headers), 400, "validation_error"
        )
        assert f"NUL (\\u0000) in {where}" in error["message"] and where in error["details"], error
    with db.connection_context():
        assert ReviewTask.select().count() == 0


def test_body_over_two_mebibytes_is_413(client, agent_headers):
    payload = article_payload()
    payload["candidates"]["bodyOptions"] = [body_option(f"o{i}", "x" * 190_000) for i in range(12)]
    data = json.dumps(payload)
    assert len(data) > 2 * 1024 * 1024
    assert_error(
        client.post(URL, data=data, headers={**agent_headers, "Content-Type": "application/json"}),
        413,
        "payload_too_large",
    )
    assert task_count() == 0


def test_chunked_body_over_the_limit_is_413_and_under_it_is_read_whole(app, agent_headers):
    big = article_payload()
    big["candidates"]["bodyOptions"] = [body_option(f"o{i}", "x" * 190_000) for i in range(12)]

    def chunks(payload):
        data = json.dumps(payload).encode()
        return (data[i : i + 65536] for i in range(0, len(data), 65536))

    headers = {**agent_headers, "Content-Type": "application/json"}
    with live_server(app) as base:
        over = requests.post(f"{base}{URL}", data=chunks(big), headers=headers, timeout=30)
        under = requests.post(f"{base}{URL}", data=chunks(article_payload()), headers=headers, timeout=30)
    assert over.status_code == 413 and over.json()["error"]["code"] == "payload_too_large"
    assert under.status_code == 201
    assert task_count() == 1


def test_credentials_come_before_validation_and_existence(client, admin_client, agent_headers):
    assert_error(client.post(URL, json={"bad": 1}), 401, "unauthorized")
    assert_error(
        client.post(URL, json=article_payload(), headers={"x-review-agent-token": "wrong"}), 401, "unauthorized"
    )
    assert_error(client.get(f"{URL}/nope"), 401, "unauthorized")
    assert_error(client.get(f"{URL}/nope", headers=agent_headers), 404, "not_found")
    assert_error(client.get("/api/review/tasks/nope", headers=agent_headers), 401, "unauthorized")
    assert_error(admin_client.get("/api/review/tasks/nope"), 404, "not_found")
    assert_error(admin_client.post(URL, json=article_payload()), 401, "unauthorized")


def test_idempotency_key_replays_the_first_answer(client, agent_headers):
    headers = {**agent_headers, "Idempotency-Key": "create-1"}
    first = client.post(URL, json=article_payload(), headers=headers)
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    # Same content, different key order and spacing: still the same body.
    reordered = json.dumps(dict(reversed(list(article_payload().items()))), indent=2)
    again = client.post(URL, data=reordered, headers={**headers, "Content-Type": "application/json"})
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert task_count() == 1
    other = client.post(URL, json=article_payload(topic="另一个主题"), headers=headers)
    assert_error(other, 409, "idempotency_conflict")
    assert task_count() == 1
    fresh = client.post(URL, json=article_payload(), headers={**agent_headers, "Idempotency-Key": "create-2"})
    assert fresh.status_code == 201 and fresh.get_json()["id"] != first.get_json()["id"]


def test_idempotency_keys_expire_after_a_day_and_have_a_length_limit(client, agent_headers):
    headers = {**agent_headers, "Idempotency-Key": "old-key"}
    first = create_task(client, headers, article_payload())
    with db.connection_context():
        IdempotencyKey.update(created_at="2000-01-01T00:00:00.000Z").execute()
    second = client.post(URL, json=article_payload(), headers=headers)
    assert second.status_code == 201 and "Idempotent-Replayed" not in second.headers
    assert second.get_json()["id"] != first["id"]
    long_key = {**agent_headers, "Idempotency-Key": "k" * 129}
    error = assert_error(client.post(URL, json=article_payload(), headers=long_key), 400, "validation_error")
    assert "Idempotency-Key" in error["details"]


@pytest.mark.parametrize("key", ["a\x00b", "tab\there", "bell\x07"])
def test_an_idempotency_key_with_control_characters_is_refused_and_creates_nothing(client, agent_headers, key):
    """A NUL was a 500 on PostgreSQL (its text holds none) after the key had been checked for its length only."""
    answer = client.post(URL, json=article_payload(), headers={**agent_headers, "Idempotency-Key": key})
    error = assert_error(answer, 400, "validation_error")
    assert error["details"] == {"Idempotency-Key": ["control characters"]}
    with db.connection_context():
        assert ReviewTask.select().count() == 0 and IdempotencyKey.select().count() == 0


def test_a_failed_creation_does_not_burn_the_key(client, agent_headers):
    headers = {**agent_headers, "Idempotency-Key": "retry-me"}
    bad = article_payload()
    bad["candidates"]["bodyOptions"][0]["outline"] = ["a"]
    assert_error(client.post(URL, json=bad, headers=headers), 400, "validation_error")
    assert client.post(URL, json=article_payload(), headers=headers).status_code == 201


def test_body_options_are_read_for_images_before_the_write_lock(app, client, agent_headers, monkeypatch):
    """A creation may carry megabytes of body options: parsing them under the lock held up every writer."""
    from models.writes import _WRITE_LOCK
    from services.review import creation

    parse, held = creation.image_urls, []

    def watched(markdown):
        held.append(_WRITE_LOCK._is_owned())
        return parse(markdown)

    monkeypatch.setattr(creation, "image_urls", watched)
    payload = article_payload()
    payload["candidates"]["bodyOptions"][0]["content"] = "![a](https://cdn.example.com/a.png)"
    assert client.post(URL, json=payload, headers=agent_headers).status_code == 201
    assert held == [False]
