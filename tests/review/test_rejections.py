"""Rejections (rules 3-5, whole task, the outbox row), the decision stage order, and states."""

import pytest

from models import OutboxMessage, db
from tests.helpers.app import assert_error
from tests.helpers.review import (
    approve_article,
    article_selections,
    decision_url,
    full_crop,
    image_post_selections,
    locked_except,
    make_asset,
    outbox_count,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def test_selections_are_checked_before_action_specific_fields(admin_client, article):
    task, cover = article
    body = {
        "action": "reject_rework",
        "rejectedElements": ["title"],
        "selections": {"title": "t", "summary": "s", "body": "b"},
    }
    error = assert_error(admin_client.post(decision_url(task), json=body), 400, "validation_error")
    assert "selections.coverImage" in error["details"]
    assert "rejectionReason" not in error["details"] and "lockedSelections" not in error["details"]


def _reject(task, cover, rejected, **extra):
    selections = article_selections(task, cover)
    return {
        "action": "reject_rework",
        "rejectionReason": "style_mismatch",
        "rejectedElements": rejected,
        "selections": selections,
        "lockedSelections": locked_except(selections, rejected),
        **extra,
    }


REJECTION_RULES = {
    "no reason": (lambda b: b.pop("rejectionReason"), "rejectionReason"),
    "unknown reason": (lambda b: b.update(rejectionReason="boring"), "rejectionReason"),
    "no locked selections": (lambda b: b.pop("lockedSelections"), "lockedSelections"),
    "locked overlaps rejected": (lambda b: b["lockedSelections"].update(title="x"), "lockedSelections.title"),
    "locked misses a field": (lambda b: b["lockedSelections"].pop("summary"), "lockedSelections.summary"),
    "locked value differs": (lambda b: b["lockedSelections"].update(summary="别的"), "lockedSelections.summary"),
    "image_post element": (lambda b: b.update(rejectedElements=["description"]), "rejectedElements.0"),
    "not an element": (lambda b: b.update(rejectedElements=["author"]), "rejectedElements.0"),
    "incomplete selections": (lambda b: b["selections"].pop("coverImage"), "selections.coverImage"),
    "rejected key not selected": (lambda b: b["selections"].pop("title"), "selections.title"),
    "locked edited body without draft": (
        lambda b: (b["selections"].update(body="改过的正文"), b["lockedSelections"].update(body="改过的正文")),
        "bodyDraft",
    ),
    "locked summary over 100": (
        lambda b: (b["selections"].update(summary="字" * 101), b["lockedSelections"].update(summary="字" * 101)),
        "selections.summary",
    ),
}


@pytest.mark.parametrize("name", list(REJECTION_RULES))
def test_each_rejection_rule(admin_client, article, name):
    task, cover = article
    change, path = REJECTION_RULES[name]
    body = _reject(task, cover, ["title"])
    change(body)
    error = assert_error(admin_client.post(decision_url(task), json=body), 400, "validation_error")
    assert path in error["details"], error["details"]
    assert outbox_count() == 0


def _reject_post(images, rejected, change=lambda s: None):
    selections = image_post_selections(images)
    change(selections)
    return {
        "action": "reject_rework",
        "rejectionReason": "image_issue",
        "rejectedElements": rejected,
        "selections": selections,
        "lockedSelections": locked_except(selections, rejected),
    }


def test_images_may_be_rejected_without_the_crop(admin_client, post):
    task, images = post
    response = admin_client.post(decision_url(task), json=_reject_post(images, ["images"]))
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["lockedSelections"]["coverCrop"]["assetId"] == images[0]["assetId"]


MISSING = {"assetId": "does-not-exist"}
DANGLING_ARTICLE = {  # a rejected value may fail the quality rules, never point at nothing
    "coverImage": (lambda s: s.update(coverImage=MISSING), "selections.coverImage"),
    "bodyImages": (lambda s: s.update(bodyImages=["/uploads/review/none.png"]), "selections.bodyImages.0"),
    "body": (lambda s: s.update(body="![x](https://example.com/a.png)"), "selections.body"),
}
DANGLING_POST = {
    "images": (lambda s: s["images"].append(MISSING), "selections.images.3.assetId"),
    "coverCrop": (lambda s: s["coverCrop"].update(MISSING), "selections.coverCrop.assetId"),
}


@pytest.mark.parametrize("key", list(DANGLING_ARTICLE))
def test_rejected_article_values_must_still_resolve(admin_client, article, key):
    task, cover = article
    change, path = DANGLING_ARTICLE[key]
    body = _reject(task, cover, [key])
    change(body["selections"])
    error = assert_error(admin_client.post(decision_url(task), json=body), 400, "validation_error")
    assert path in error["details"], error["details"]
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["version"] == 1


@pytest.mark.parametrize("key", list(DANGLING_POST))
def test_rejected_image_post_values_must_still_resolve(admin_client, post, key):
    task, images = post
    change, path = DANGLING_POST[key]
    error = assert_error(
        admin_client.post(decision_url(task), json=_reject_post(images, [key], change)), 400, "validation_error"
    )
    assert path in error["details"], error["details"]
    assert outbox_count() == 0


def test_rejected_values_skip_the_quality_rules(app, admin_client, article, post):
    task, cover = article
    body = _reject(task, cover, ["coverImage"])
    body["selections"]["coverImage"] = make_asset(app, 500, 900)["url"]  # too tall: why it is rejected
    assert admin_client.post(decision_url(task), json=body).status_code == 200
    task, images = post
    off_first = _reject_post(images, ["coverCrop"], lambda s: s.update(coverCrop=full_crop(images[1])))
    assert admin_client.post(decision_url(task), json=off_first).status_code == 200


def test_field_level_rejection_keeps_the_faulty_value_and_notifies(admin_client, article):
    task, cover = article
    body = _reject(task, cover, ["summary"], rejectionNote="摘要太长")
    body["selections"]["summary"] = "长" * 110  # over the approval limit: that is why it is rejected
    body["lockedSelections"] = locked_except(body["selections"], ["summary"])
    response = admin_client.post(decision_url(task), json=body)
    assert response.status_code == 200, response.get_json()
    done = response.get_json()
    assert done["status"] == "rejected_rework" and done["rejectedElements"] == ["summary"]
    assert done["lockedSelections"] == locked_except(body["selections"], ["summary"])
    assert (done["rejectionReason"], done["rejectionNote"]) == ("style_mismatch", "摘要太长")
    assert done["timeline"][-1]["type"] == "rejected"
    assert done["timeline"][-1]["data"]["rejectedElements"] == ["summary"]
    with db.connection_context():
        message = OutboxMessage.get()
    assert message.payload["data"] == {
        "taskId": task["id"],
        "publicAccount": "silicon-rise",
        "contentType": "article",
        "topic": task["topic"],
        "rejectedElements": ["summary"],
        "rejectionReason": "style_mismatch",
        "rejectionNote": "摘要太长",
    }


def test_whole_task_rejection_needs_no_selections(admin_client, article):
    task, _cover = article
    body = {"action": "reject_rework", "rejectionReason": "content_quality"}
    response = admin_client.post(decision_url(task), json=body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["rejectedElements"] == [] and "lockedSelections" not in response.get_json()
    assert outbox_count() == 1


def test_decisions_only_from_pending_review(admin_client, article):
    task, cover = article
    assert admin_client.post(decision_url(task), json=approve_article(task, cover)).status_code == 200
    for body in (approve_article(task, cover), {"action": "reject_rework", "rejectionReason": "other"}):
        assert_error(admin_client.post(decision_url(task), json=body), 409, "invalid_state")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["version"] == 2
    assert outbox_count() == 0


def test_delivery_events_do_not_change_the_version(admin_client, article):
    from services.review import webhooks as notifications

    task, cover = article
    rejected = admin_client.post(decision_url(task), json=_reject(task, cover, ["title"])).get_json()
    with db.connection_context():
        notifications.deliver_due("http://127.0.0.1:9/nothing-listens", "whsec_x")
    response = admin_client.get(f"/api/review/tasks/{task['id']}")
    after = response.get_json()
    assert after["timeline"][-1]["type"] == "agent_notification_failed"
    assert (after["version"], after["updatedAt"]) == (rejected["version"], rejected["updatedAt"])
    assert response.headers["ETag"] == f'"{rejected["version"]}"'
