"""Agent element PATCH in each state and the full rework loops (article, image post; field-level, whole task)."""

import pytest

from tests.helpers.app import assert_error
from tests.helpers.review import (
    approve_article,
    approve_image_post,
    article_payload,
    article_selections,
    body_option,
    create_task,
    decision_url,
    full_crop,
    image_post_payload,
    image_post_selections,
    locked_except,
    make_asset,
    patch_url,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def article(app, client, agent_headers):
    cover = make_asset(app, 900, 500)
    return create_task(client, agent_headers, article_payload([cover["url"]])), cover


def read(admin_client, task):
    return admin_client.get(f"/api/review/tasks/{task['id']}").get_json()


def patch(client, headers, task, body, status=200, **kwargs):
    response = client.patch(patch_url(task), json=body, headers={**headers, **kwargs.pop("extra", {})})
    assert response.status_code == status, response.get_data(as_text=True)[:600]
    return response.get_json()


def events(task):
    return [(event["type"], event["actor"]) for event in task["timeline"]]


def test_pending_patch_writes_selections_and_a_draft_saved_event(client, agent_headers, article):
    task, _cover = article
    done = patch(client, agent_headers, task, {"title": "新标题", "summary": "s" * 120})
    assert done["status"] == "pending_review"
    assert done["selections"] == {"title": "新标题", "summary": "s" * 120}
    assert events(done)[-1] == ("draft_saved", "agent")
    assert done["timeline"][-1]["data"] == {"fields": ["title", "summary"]}
    assert done["candidates"] == task["candidates"] and done["version"] == 2


def test_body_patch_updates_the_draft_and_needs_a_source_with_several_options(app, client, agent_headers, article):
    task, _cover = article
    error = assert_error(
        client.patch(patch_url(task), json={"body": "新正文"}, headers=agent_headers), 400, "validation_error"
    )
    assert "sourceBodyCandidateId" in error["details"]
    error = assert_error(
        client.patch(patch_url(task), json={"body": "x", "sourceBodyCandidateId": "nope"}, headers=agent_headers),
        400,
        "validation_error",
    )
    assert "sourceBodyCandidateId" in error["details"]
    inline = make_asset(app, 400, 300, scope="library")
    text = f"新正文\n\n![图]({inline['url']})"
    done = patch(client, agent_headers, task, {"body": text, "sourceBodyCandidateId": "opt-b"})
    assert done["bodyDraft"] == {
        "markdown": text,
        "sourceBodyCandidateId": "opt-b",
        "sourceBodyCandidate": task["candidates"]["bodyOptions"][1]["content"],
        "bodyEditedFromCandidate": True,
    }
    assert done["selections"]["body"] == text
    # The saved draft names the source from now on; candidate ids never change.
    again = patch(client, agent_headers, task, {"body": task["candidates"]["bodyOptions"][1]["content"]})
    assert again["bodyDraft"]["sourceBodyCandidateId"] == "opt-b"
    assert again["bodyDraft"]["bodyEditedFromCandidate"] is False
    assert [o["id"] for o in again["candidates"]["bodyOptions"]] == ["opt-a", "opt-b"]
    error = assert_error(
        client.patch(patch_url(task), json={"body": "![x](https://evil.example/a.png)"}, headers=agent_headers),
        400,
        "validation_error",
    )
    assert "body" in error["details"]


def test_a_single_body_option_is_the_source(client, agent_headers):
    payload = article_payload()
    payload["candidates"]["bodyOptions"] = [body_option("only", "唯一正文")]
    task = create_task(client, agent_headers, payload)
    done = patch(client, agent_headers, task, {"body": "改写"})
    assert done["bodyDraft"]["sourceBodyCandidateId"] == "only"


@pytest.mark.parametrize(
    "body, path",
    [
        ({"title": "t" * 65}, "title"),
        ({"summary": "s" * 121}, "summary"),
        ({"description": "d"}, "description"),
        ({"images": [{"assetId": "x"}]}, "images"),
        ({"coverImage": {"assetId": "nope"}}, "coverImage"),
        ({"bodyImages": ["/uploads/review/none.png"]}, "bodyImages.0"),
        ({"headline": "x"}, "headline"),
        ({}, "_body"),
        ({"sourceBodyCandidateId": "opt-a"}, "sourceBodyCandidateId"),
    ],
)
def test_pending_patch_refusals(client, agent_headers, article, body, path):
    task, _cover = article
    error = assert_error(client.patch(patch_url(task), json=body, headers=agent_headers), 400, "validation_error")
    assert path in error["details"], error["details"]


def test_images_a_patch_brings_in_come_from_the_material_library(app, client, agent_headers, article):
    """Spec PATCH table: "material-library asset ids", "checked for material-library origin"; body rule 3.
    A task-local upload new to the task is refused; the task's own candidate images may stay."""
    task, cover = article
    upload = make_asset(app, 900, 500)  # scope review: an agent's own upload
    library = make_asset(app, 900, 500, scope="library")
    for values, path in (
        ({"coverImage": upload["url"]}, "coverImage"),
        ({"bodyImages": [library["url"], {"assetId": upload["assetId"]}]}, "bodyImages.1"),
        ({"body": f"正文\n\n![新图]({upload['url']})", "sourceBodyCandidateId": "opt-a"}, "body"),
    ):
        error = assert_error(client.patch(patch_url(task), json=values, headers=agent_headers), 400, "validation_error")
        assert "material library" in " ".join(error["details"][path]), error["details"]
    unchanged = client.get(f"/api/review/agent/tasks/{task['id']}", headers=agent_headers).get_json()
    assert unchanged["version"] == task["version"]  # nothing changed
    kept = {
        "coverImage": cover["url"],
        "bodyImages": [library["url"]],
        "sourceBodyCandidateId": "opt-a",
        "body": f"正文\n\n![封面]({cover['url']})",
    }  # the task's own candidate cover, and a library image
    done = patch(client, agent_headers, task, kept)
    assert done["selections"]["coverImage"] == cover["url"] and done["selections"]["bodyImages"] == [library["url"]]


def test_an_image_post_patch_cannot_bring_an_upload_in_through_the_crop(app, client, agent_headers):
    images = [make_asset(app, 600, 800) for _ in range(2)]
    task = create_task(client, agent_headers, image_post_payload(images))
    upload = make_asset(app, 600, 800)  # the agent's own, new to the task
    error = assert_error(
        client.patch(patch_url(task), json={"coverCrop": full_crop(upload)}, headers=agent_headers),
        400,
        "validation_error",
    )
    assert "material library" in error["details"]["coverCrop.assetId"][0]
    done = patch(
        client, agent_headers, task, {"images": [{"assetId": images[1]["assetId"]}], "coverCrop": full_crop(images[1])}
    )  # the task's own: fine
    assert done["selections"]["coverCrop"]["assetId"] == images[1]["assetId"]


def test_patch_cover_is_checked_for_ratio(app, client, agent_headers, article):
    task, _cover = article
    tall = make_asset(app, 500, 900, scope="library")
    error = assert_error(
        client.patch(patch_url(task), json={"coverImage": tall["url"]}, headers=agent_headers), 400, "validation_error"
    )
    assert "coverImage" in error["details"]


def test_patch_on_approved_task_is_invalid_state(client, admin_client, agent_headers, article):
    task, cover = article
    assert admin_client.post(decision_url(task), json=approve_article(task, cover)).status_code == 200
    assert_error(client.patch(patch_url(task), json={"title": "x"}, headers=agent_headers), 409, "invalid_state")
    assert_error(
        client.patch("/api/review/agent/tasks/nope/elements", json={"title": "x"}, headers=agent_headers),
        404,
        "not_found",
    )
    assert_error(client.patch(patch_url(task), json={"title": "x"}), 401, "unauthorized")


def test_patch_honours_if_match(client, agent_headers, article):
    task, _cover = article
    assert_error(
        client.patch(patch_url(task), json={"title": "x"}, headers={**agent_headers, "If-Match": '"2"'}),
        412,
        "precondition_failed",
    )
    response = client.patch(patch_url(task), json={"title": "x"}, headers={**agent_headers, "If-Match": '"1"'})
    assert response.status_code == 200 and response.headers["ETag"] == '"2"'


def test_article_field_level_rework_loop(client, admin_client, agent_headers, article):
    task, cover = article
    selections = article_selections(task, cover)
    rejected = ["title", "summary"]
    decision = {
        "action": "reject_rework",
        "rejectionReason": "style_mismatch",
        "rejectionNote": "标题和摘要再改",
        "rejectedElements": rejected,
        "selections": selections,
        "lockedSelections": locked_except(selections, rejected),
        "manualOverrides": {"title": {"basedOn": selections["title"], "value": selections["title"]}},
    }
    assert admin_client.post(decision_url(task), json=decision).status_code == 200
    waiting = client.get("/api/review/agent/tasks?status=rejected_rework", headers=agent_headers).get_json()
    assert [t["id"] for t in waiting] == [task["id"]]

    for locked in ({"author": "别人"}, {"body": "新正文"}, {"title": "新", "coverImage": cover["url"]}):
        error = assert_error(client.patch(patch_url(task), json=locked, headers=agent_headers), 409, "field_locked")
        assert set(error["details"]) == set(locked) - set(rejected)
    first = patch(client, agent_headers, task, {"title": "改好的标题"})
    assert first["status"] == "rejected_rework" and first["rejectedElements"] == ["summary"]
    assert "manualOverrides" not in first  # the patched key's override is cleared
    assert events(first)[-1] == ("rework_submitted", "agent")
    data = first["timeline"][-1]["data"]
    assert {key: data[key] for key in ("fields", "remainingElements")} == {
        "fields": ["title"],
        "remainingElements": ["summary"],
    }
    assert data["changes"] == {"title": {"before": selections["title"], "after": "改好的标题"}}  # docs/api.md §15

    # The last field runs the approval-level check: 101 characters pass PATCH but not approval.
    error = assert_error(
        client.patch(patch_url(task), json={"summary": "字" * 101}, headers=agent_headers), 400, "validation_error"
    )
    assert "selections.summary" in error["details"]
    assert read(admin_client, task)["version"] == first["version"]

    last = patch(client, agent_headers, task, {"summary": "改好的摘要"})
    assert last["status"] == "pending_review"
    assert "rejectedElements" not in last and "lockedSelections" not in last
    assert events(last)[-2:] == [("rework_submitted", "agent"), ("returned_to_review", "agent")]
    assert last["selections"] == {**selections, "title": "改好的标题", "summary": "改好的摘要"}
    assert last["rejectionNote"] == "标题和摘要再改"
    approved = admin_client.post(
        decision_url(task), json={"action": "approve_without_publish", "selections": last["selections"]}
    )
    assert approved.status_code == 200, approved.get_json()
    assert "rejectionReason" not in approved.get_json()


def test_a_rework_patch_cannot_give_up_a_rejected_field_it_cannot_fix_later(
    client, admin_client, agent_headers, article
):
    """A fixed key leaves rejectedElements (and becomes locked), so it must be approval-ready then."""
    task, cover = article
    selections = article_selections(task, cover)
    rejected = ["title", "summary"]
    decision = {
        "action": "reject_rework",
        "rejectionReason": "content_quality",
        "rejectedElements": rejected,
        "selections": selections,
        "lockedSelections": locked_except(selections, rejected),
    }
    assert admin_client.post(decision_url(task), json=decision).status_code == 200
    before = read(admin_client, task)
    error = assert_error(
        client.patch(patch_url(task), json={"summary": "字" * 101}, headers=agent_headers), 400, "validation_error"
    )
    assert list(error["details"]) == ["selections.summary"]
    for blank in ({"title": ""}, {"title": "  "}, {"title": "好标题", "summary": ""}):
        error = assert_error(client.patch(patch_url(task), json=blank, headers=agent_headers), 400, "validation_error")
        assert error["details"] == {key: ["must not be empty"] for key, value in blank.items() if not value.strip()}
    assert read(admin_client, task) == before
    assert patch(client, agent_headers, task, {"summary": "字" * 100})["rejectedElements"] == ["title"]
    assert patch(client, agent_headers, task, {"title": "好标题"})["status"] == "pending_review"


def test_required_texts_are_never_patched_blank(app, client, agent_headers, article):
    task, _cover = article
    for blank in ({"title": " "}, {"summary": ""}):
        error = assert_error(client.patch(patch_url(task), json=blank, headers=agent_headers), 400, "validation_error")
        assert error["details"] == {next(iter(blank)): ["must not be empty"]}
    assert patch(client, agent_headers, task, {"author": ""})["selections"] == {"author": ""}
    images = [make_asset(app, 600, 800)]
    post = create_task(client, agent_headers, image_post_payload(images))
    error = assert_error(
        client.patch(patch_url(post), json={"description": "\n"}, headers=agent_headers), 400, "validation_error"
    )
    assert error["details"] == {"description": ["must not be empty"]}


def test_image_post_field_level_rework_loop(app, client, admin_client, agent_headers):
    images = [make_asset(app, 600, 800) for _ in range(3)]
    task = create_task(client, agent_headers, image_post_payload(images))
    selections = image_post_selections(images)
    rejected = ["images", "coverCrop"]
    decision = {
        "action": "reject_rework",
        "rejectionReason": "image_issue",
        "rejectedElements": rejected,
        "selections": selections,
        "lockedSelections": locked_except(selections, rejected),
    }
    assert admin_client.post(decision_url(task), json=decision).status_code == 200
    assert_error(client.patch(patch_url(task), json={"title": "新"}, headers=agent_headers), 409, "field_locked")

    new_images = [make_asset(app, 900, 1200, scope="library"), images[1]]
    first = patch(client, agent_headers, task, {"images": [{"assetId": a["assetId"]} for a in new_images]})
    assert first["status"] == "rejected_rework" and first["rejectedElements"] == ["coverCrop"]
    error = assert_error(
        client.patch(patch_url(task), json={"coverCrop": full_crop(images[0])}, headers=agent_headers),
        400,
        "validation_error",
    )
    assert "coverCrop.assetId" in error["details"]
    squeezed = {
        "assetId": new_images[0]["assetId"],
        "cropPercentList": [{"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 0.5}],
    }
    error = assert_error(
        client.patch(patch_url(task), json={"coverCrop": squeezed}, headers=agent_headers), 400, "validation_error"
    )
    assert "coverCrop.cropPercentList.0" in error["details"]
    last = patch(client, agent_headers, task, {"coverCrop": full_crop(new_images[0])})
    assert last["status"] == "pending_review" and "lockedSelections" not in last
    assert last["selections"]["commentSettings"] == selections["commentSettings"]
    approved = admin_client.post(
        decision_url(task), json={"action": "approve_without_publish", "selections": last["selections"]}
    )
    assert approved.status_code == 200, approved.get_json()


def refs(images):
    return [{"assetId": a["assetId"]} for a in images]


def test_images_patch_must_keep_the_cropped_first_image(client, admin_client, agent_headers, post):
    task, (a, b, c) = post
    patch(client, agent_headers, task, {"images": refs([a, b, c]), "coverCrop": full_crop(a)})
    before = read(admin_client, task)
    error = assert_error(
        client.patch(patch_url(task), json={"images": refs([b, a])}, headers=agent_headers), 400, "validation_error"
    )
    assert "keep it first or patch coverCrop" in error["details"]["images"][0]
    assert read(admin_client, task) == before
    assert patch(client, agent_headers, task, {"images": refs([a, c])})["selections"]["images"] == refs([a, c])
    both = patch(client, agent_headers, task, {"images": refs([b, a]), "coverCrop": full_crop(b)})
    assert both["selections"]["coverCrop"]["assetId"] == b["assetId"]


def test_image_post_rework_of_images_alone_keeps_the_locked_crop(app, client, admin_client, agent_headers, post):
    task, images = post
    selections = image_post_selections(images)
    decision = {
        "action": "reject_rework",
        "rejectionReason": "image_issue",
        "rejectedElements": ["images"],
        "selections": selections,
        "lockedSelections": locked_except(selections, ["images"]),
    }
    assert admin_client.post(decision_url(task), json=decision).status_code == 200
    new = make_asset(app, 600, 800, scope="library")
    error = assert_error(
        client.patch(patch_url(task), json={"images": refs([new, images[0]])}, headers=agent_headers),
        400,
        "validation_error",
    )
    assert "images" in error["details"]
    done = patch(client, agent_headers, task, {"images": refs([images[0], new])})
    assert done["status"] == "pending_review" and done["selections"]["coverCrop"] == selections["coverCrop"]
    approved = admin_client.post(
        decision_url(task), json={"action": "approve_without_publish", "selections": done["selections"]}
    )
    assert approved.status_code == 200, approved.get_json()


def test_article_whole_task_rework_accepts_any_field_and_returns_at_once(client, admin_client, agent_headers, article):
    task, _cover = article
    reject = {"action": "reject_rework", "rejectionReason": "content_quality", "rejectionNote": "整体重写"}
    assert admin_client.post(decision_url(task), json=reject).status_code == 200
    assert_error(
        client.patch(patch_url(task), json={"description": "x"}, headers=agent_headers), 400, "validation_error"
    )
    done = patch(client, agent_headers, task, {"author": "新作者"})
    assert done["status"] == "pending_review" and done["selections"] == {"author": "新作者"}
    assert events(done)[-2:] == [("rework_submitted", "agent"), ("returned_to_review", "agent")]
    assert "rejectedElements" not in done
    # Back in review: the next PATCH is an ordinary draft save.
    assert events(patch(client, agent_headers, task, {"title": "t"}))[-1] == ("draft_saved", "agent")


def test_image_post_whole_task_rework(app, client, admin_client, agent_headers):
    images = [make_asset(app, 600, 800) for _ in range(2)]
    task = create_task(client, agent_headers, image_post_payload(images))
    reject = {
        "action": "reject_rework",
        "rejectionReason": "image_issue",
        "selections": {"title": "半成品"},
        "rejectedElements": [],
    }
    rejected = admin_client.post(decision_url(task), json=reject).get_json()
    assert rejected["status"] == "rejected_rework" and rejected["selections"] == {"title": "半成品"}
    done = patch(
        client, agent_headers, task, {"commentSettings": {"needOpenComment": False, "onlyFansCanComment": False}}
    )
    assert done["status"] == "pending_review"
    assert done["selections"] == {
        "title": "半成品",
        "commentSettings": {"needOpenComment": False, "onlyFansCanComment": False},
    }
    approved = admin_client.post(decision_url(task), json=approve_image_post(images))
    assert approved.status_code == 200 and approved.get_json()["status"] == "approved"
