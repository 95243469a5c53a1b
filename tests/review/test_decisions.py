"""Admin decisions: approval rules 1-2 and 6-9 for both content types, If-Match, credentials."""

import json

import pytest

from tests.helpers.app import assert_error
from tests.helpers.review import (
    approve_article,
    approve_image_post,
    article_payload,
    article_selections,
    create_task,
    decision_url,
    error_paths,
    locked_except,
    make_asset,
    outbox_count,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.mark.parametrize("action", ["approve_without_publish", "approve_and_publish"])
def test_approval_saves_selections_and_derives_the_body_draft(admin_client, article, action):
    task, cover = article
    response = admin_client.post(decision_url(task), json=approve_article(task, cover, action))
    assert response.status_code == 200, response.get_json()
    done = response.get_json()
    assert done["selections"] == article_selections(task, cover)
    assert done["bodyDraft"] == {
        "markdown": task["candidates"]["bodyOptions"][0]["content"],
        "sourceBodyCandidateId": "opt-a",
        "sourceBodyCandidate": task["candidates"]["bodyOptions"][0]["content"],
        "bodyEditedFromCandidate": False,
    }
    assert "manualOverrides" not in done
    approvals = [e for e in done["timeline"] if e["type"] == "approved"]
    assert [(e["actor"], e["actorName"], e["data"]) for e in approvals] == [("admin", "admin", {"action": action})]
    assert response.headers["ETag"] == f'"{done["version"]}"'
    assert outbox_count() == 0
    assert outbox_count("review_task.approved") == 1  # recorded; sent only when chosen (docs/api.md §13)
    if action == "approve_without_publish":
        assert done["status"] == "approved" and done["version"] == 2 and done["publishJobs"] == []
    else:  # the publishing area runs its job after the approval committed; the approval stands either way
        assert done["status"] in ("approved", "published")
        assert [job["triggerMode"] for job in done["publishJobs"]] in ([], ["auto_after_approval"])


def test_image_post_approval(admin_client, post):
    task, images = post
    response = admin_client.post(decision_url(task), json=approve_image_post(images))
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["selections"]["coverCrop"]["assetId"] == images[0]["assetId"]
    assert "bodyDraft" not in response.get_json()


def _article_case(change):
    def build(task, cover):
        body = approve_article(task, cover)
        change(body, task, cover)
        return body

    return build


ARTICLE_RULES = {
    "no action": (lambda b, t, c: b.pop("action"), "action"),
    "unknown action": (lambda b, t, c: b.update(action="publish_now"), "action"),
    "no selections": (lambda b, t, c: b.pop("selections"), "selections"),
    "no title": (lambda b, t, c: b["selections"].pop("title"), "selections.title"),
    "blank body": (lambda b, t, c: b["selections"].update(body=" "), "selections.body"),
    "no cover": (lambda b, t, c: b["selections"].pop("coverImage"), "selections.coverImage"),
    "unknown cover": (lambda b, t, c: b["selections"].update(coverImage={"assetId": "nope"}), "selections.coverImage"),
    "cover url not an asset": (
        lambda b, t, c: b["selections"].update(coverImage="https://example.com/x.png"),
        "selections.coverImage",
    ),
    "summary over 100": (lambda b, t, c: b["selections"].update(summary="字" * 101), "selections.summary"),
    "title over 64": (lambda b, t, c: b["selections"].update(title="t" * 65), "selections.title"),
    "author over the platform's 16": (lambda b, t, c: b["selections"].update(author="作" * 17), "selections.author"),
    "image_post field": (lambda b, t, c: b["selections"].update(description="d"), "selections.description"),
    "unknown field": (lambda b, t, c: b["selections"].update(theme="x"), "selections.theme"),
    "body image not an asset": (
        lambda b, t, c: b["selections"].update(body="![x](https://example.com/a.png)"),
        "selections.body",
    ),
    "body image with a file: link": (
        lambda b, t, c: b["selections"].update(body="![x](file:///etc/passwd)"),
        "selections.body",
    ),
    "bodyImages unknown": (
        lambda b, t, c: b["selections"].update(bodyImages=["/uploads/review/none.png"]),
        "selections.bodyImages.0",
    ),
    "edited body without draft": (lambda b, t, c: b["selections"].update(body="自己写的正文"), "bodyDraft"),
    "draft without source id": (
        lambda b, t, c: b.update(bodyDraft={"markdown": b["selections"]["body"]}),
        "bodyDraft.sourceBodyCandidateId",
    ),
    "draft with unknown source": (
        lambda b, t, c: b.update(bodyDraft={"markdown": b["selections"]["body"], "sourceBodyCandidateId": "zzz"}),
        "bodyDraft.sourceBodyCandidateId",
    ),
    "draft differs from body": (
        lambda b, t, c: b.update(bodyDraft={"markdown": "其他", "sourceBodyCandidateId": "opt-a"}),
        "bodyDraft.markdown",
    ),
    "draft edited flag wrong": (
        lambda b, t, c: (
            b["selections"].update(body="改过"),
            b.update(
                bodyDraft={"markdown": "改过", "sourceBodyCandidateId": "opt-a", "bodyEditedFromCandidate": False}
            ),
        ),
        "bodyDraft.bodyEditedFromCandidate",
    ),
    "draft unknown theme": (
        lambda b, t, c: b.update(
            bodyDraft={"markdown": b["selections"]["body"], "sourceBodyCandidateId": "opt-a", "themeTemplate": "neon"}
        ),
        "bodyDraft.themeTemplate",
    ),
    "body override without edit": (
        lambda b, t, c: b.update(
            manualOverrides={"body": {"basedOnCandidateId": "opt-a", "value": b["selections"]["body"]}}
        ),
        "manualOverrides.body",
    ),
    "title override value differs": (
        lambda b, t, c: b.update(manualOverrides={"title": {"basedOn": "芯片的未来在哪里", "value": "别的标题"}}),
        "manualOverrides.title.value",
    ),
    "override key of image_post": (
        lambda b, t, c: b.update(manualOverrides={"description": {"basedOn": "a", "value": "a"}}),
        "manualOverrides.description",
    ),
    "rejection fields on approval": (lambda b, t, c: b.update(rejectionReason="other"), "rejectionReason"),
}


@pytest.mark.parametrize("name", list(ARTICLE_RULES))
def test_each_article_decision_rule(admin_client, article, name):
    task, cover = article
    change, path = ARTICLE_RULES[name]
    body = _article_case(change)(task, cover)
    error = assert_error(admin_client.post(decision_url(task), json=body), 400, "validation_error")
    assert path in error["details"], error["details"]
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert after["status"] == "pending_review" and after["version"] == 1


def test_cover_ratio_bounds_come_from_settings(make_app, agent_headers):
    from tests.helpers.app import create_admin, login

    app = make_app(REVIEW_COVER_RATIO_MIN=1.5, REVIEW_COVER_RATIO_MAX=2.0)
    client = app.test_client()
    create_admin()
    login(client)
    square, wide = make_asset(app, 600, 600), make_asset(app, 1000, 500)
    task = create_task(client, agent_headers, article_payload())
    error = assert_error(client.post(decision_url(task), json=approve_article(task, square)), 400, "validation_error")
    assert "between 1.5 and 2.0" in error["details"]["selections.coverImage"][0]
    assert client.post(decision_url(task), json=approve_article(task, wide)).status_code == 200


def test_edits_are_recorded_in_overrides_and_urls_equal_asset_ids(app, admin_client, article):
    task, cover = article
    inline = make_asset(app, 300, 300)
    body = approve_article(task, cover)
    edited = task["candidates"]["bodyOptions"][1]["content"] + f"\n\n![图]({inline['url']})"
    body["selections"].update(
        title="芯片的未来（修订）", body=edited, coverImage=cover["url"], bodyImages=[inline["url"]]
    )
    body["bodyDraft"] = {"markdown": edited, "sourceBodyCandidateId": "opt-b", "themeTemplate": "tech-blue"}
    body["manualOverrides"] = {
        "title": {"basedOn": "芯片的未来在哪里", "value": "芯片的未来（修订）"},
        "body": {"basedOnCandidateId": "opt-b", "value": edited},
        "coverImage": {"basedOn": None, "value": {"assetId": cover["assetId"]}},
        "bodyImages": {"value": [{"assetId": inline["assetId"]}]},
    }
    response = admin_client.post(decision_url(task), json=body)
    assert response.status_code == 200, response.get_json()
    done = response.get_json()
    assert done["manualOverrides"]["title"] == {"basedOn": "芯片的未来在哪里", "value": "芯片的未来（修订）"}
    assert done["selections"]["title"] == "芯片的未来（修订）"
    assert done["bodyDraft"]["bodyEditedFromCandidate"] is True
    assert done["bodyDraft"]["sourceBodyCandidate"] == task["candidates"]["bodyOptions"][1]["content"]
    assert done["bodyDraft"]["themeTemplate"] == "tech-blue"


def test_edits_the_client_did_not_record_are_recorded_by_the_server(app, admin_client, article):
    """Spec decision rule 8: a hand-written value gets its override even when the client sends none."""
    task, cover = article
    library = make_asset(app, 900, 500, scope="library")
    body = approve_article(task, cover)
    edited = task["candidates"]["bodyOptions"][1]["content"] + "\n\n补充一段"
    body["selections"].update(title="三分钟看懂芯片！", body=edited, coverImage={"assetId": library["assetId"]})
    body["bodyDraft"] = {"markdown": edited, "sourceBodyCandidateId": "opt-b"}
    body["manualOverrides"] = {"summary": {"basedOn": "x", "value": "一篇关于芯片的短文"}}  # sent: kept as sent
    response = admin_client.post(decision_url(task), json=body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["manualOverrides"] == {
        "summary": {"basedOn": "x", "value": "一篇关于芯片的短文"},
        "title": {"basedOn": "三分钟看懂芯片", "value": "三分钟看懂芯片！"},  # the closest candidate
        "body": {"basedOnCandidateId": "opt-b", "value": edited},
        "coverImage": {"basedOn": cover["url"], "value": {"assetId": library["assetId"]}},
    }


def test_body_images_from_outside_the_placeholder_options_are_recorded(app, client, agent_headers, admin_client):
    cover, option, library = make_asset(app), make_asset(app, 300, 300), make_asset(app, 300, 300, scope="library")
    payload = article_payload([cover["url"]])
    payload["candidates"]["bodyImageCandidates"] = [{"placeholderId": "p1", "options": [option["url"]]}]
    results = []
    for picked in (option, library):
        task = create_task(client, agent_headers, payload)
        body = approve_article(task, cover)
        body["selections"]["bodyImages"] = [{"assetId": picked["assetId"]}]
        response = admin_client.post(decision_url(task), json=body)
        assert response.status_code == 200, response.get_json()
        results.append(response.get_json().get("manualOverrides"))
    assert results == [None, {"bodyImages": {"basedOn": [option["url"]], "value": [{"assetId": library["assetId"]}]}}]


def test_image_post_images_outside_the_groups_are_recorded(app, admin_client, post):
    task, images = post
    extra = make_asset(app, 600, 800, scope="library")
    body = approve_image_post([*images, extra])
    body["selections"]["description"] = task["candidates"]["descriptions"][0]
    response = admin_client.post(decision_url(task), json=body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["manualOverrides"] == {
        "images": {"basedOn": None, "value": [{"assetId": a["assetId"]} for a in [*images, extra]]}
    }


def test_values_the_agent_patched_in_are_not_recorded_as_reviewer_edits(client, admin_client, agent_headers, article):
    task, cover = article
    patched = client.patch(
        f"/api/review/agent/tasks/{task['id']}/elements", json={"title": "代理改过的标题"}, headers=agent_headers
    )
    assert patched.status_code == 200, patched.get_json()
    body = approve_article(task, cover)
    body["selections"]["title"] = "代理改过的标题"
    response = admin_client.post(decision_url(task), json=body, headers={"If-Match": patched.headers["ETag"]})
    assert response.status_code == 200, response.get_json()
    assert "manualOverrides" not in response.get_json()


def test_a_locked_edit_keeps_its_override_through_rework_and_approval(client, admin_client, agent_headers, article):
    task, cover = article
    selections = {**article_selections(task, cover), "title": "审稿人写的标题"}
    rejected = admin_client.post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "selections": selections,
            "rejectedElements": ["summary"],
            "lockedSelections": locked_except(selections, ["summary"]),
            "rejectionReason": "content_quality",
        },
    )
    assert rejected.status_code == 200, rejected.get_json()
    recorded = {"basedOn": "芯片的未来在哪里", "value": "审稿人写的标题"}
    assert rejected.get_json()["manualOverrides"] == {"title": recorded}
    patched = client.patch(
        f"/api/review/agent/tasks/{task['id']}/elements", json={"summary": "代理重写的摘要"}, headers=agent_headers
    )
    assert patched.status_code == 200 and patched.get_json()["status"] == "pending_review", patched.get_json()
    approval = {"action": "approve_without_publish", "selections": {**selections, "summary": "代理重写的摘要"}}
    done = admin_client.post(decision_url(task), json=approval)
    assert done.status_code == 200, done.get_json()
    assert done.get_json()["manualOverrides"] == {"title": recorded}


def _post_case(change):
    def build(images):
        body = approve_image_post(images)
        change(body, images)
        return body

    return build


def _crop(**box):
    return lambda b, i: b["selections"]["coverCrop"]["cropPercentList"][0].update(box)


POST_RULES = {
    "no commentSettings": (lambda b, i: b["selections"].pop("commentSettings"), "selections.commentSettings"),
    "no coverCrop": (lambda b, i: b["selections"].pop("coverCrop"), "selections.coverCrop"),
    "no description": (lambda b, i: b["selections"].pop("description"), "selections.description"),
    "no images": (lambda b, i: b["selections"].update(images=[]), "selections.images"),
    "21 images": (lambda b, i: b["selections"].update(images=[{"assetId": i[0]["assetId"]}] * 21), "selections.images"),
    "image as url": (lambda b, i: b["selections"]["images"].__setitem__(0, i[0]["url"]), "selections.images.0"),
    "unknown image": (
        lambda b, i: b["selections"]["images"].append({"assetId": "nope"}),
        "selections.images.3.assetId",
    ),
    "crop not first image": (
        lambda b, i: b["selections"]["coverCrop"].update(assetId=i[1]["assetId"]),
        "selections.coverCrop.assetId",
    ),
    "crop ratio literal": (_crop(ratio="16_9"), "selections.coverCrop.cropPercentList.0.ratio"),
    "crop x1 after x2": (_crop(x1=0.8, x2=0.2), "selections.coverCrop.cropPercentList.0.x2"),
    "crop outside image": (_crop(y2=1.2), "selections.coverCrop.cropPercentList.0.y2"),
    "crop as string": (_crop(x1="0"), "selections.coverCrop.cropPercentList.0.x1"),
    "crop box not 3:4": (_crop(y2=0.95), "selections.coverCrop.cropPercentList.0"),
    "no crop boxes": (
        lambda b, i: b["selections"]["coverCrop"].update(cropPercentList=[]),
        "selections.coverCrop.cropPercentList",
    ),
    "article field": (lambda b, i: b["selections"].update(summary="s"), "selections.summary"),
    "body draft": (lambda b, i: b.update(bodyDraft={"markdown": "x", "sourceBodyCandidateId": "a"}), "bodyDraft"),
    "images override differs": (
        lambda b, i: b.update(manualOverrides={"images": {"value": [{"assetId": i[0]["assetId"]}]}}),
        "manualOverrides.images.value",
    ),
}


@pytest.mark.parametrize("name", list(POST_RULES))
def test_each_image_post_decision_rule(admin_client, post, name):
    task, images = post
    change, path = POST_RULES[name]
    error = assert_error(
        admin_client.post(decision_url(task), json=_post_case(change)(images)), 400, "validation_error"
    )
    assert path in error["details"], error["details"]


def test_crop_box_within_two_percent_of_three_by_four_passes(admin_client, post):
    task, images = post
    body = approve_image_post(images)  # 600x800: x 0..1, y 0..0.99 is 600x792 px, 1.0 % off 3:4
    body["selections"]["coverCrop"]["cropPercentList"] = [{"ratio": "3_4", "x1": 0, "y1": 0.01, "x2": 1, "y2": 1}]
    assert admin_client.post(decision_url(task), json=body).status_code == 200


def test_if_match_is_honoured(admin_client, article):
    task, cover = article
    stale = admin_client.post(decision_url(task), json=approve_article(task, cover), headers={"If-Match": '"7"'})
    error = assert_error(stale, 412, "precondition_failed")
    assert error["details"]["currentVersion"] == ["1"] and stale.headers["ETag"] == '"1"'  # what to send next
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["status"] == "pending_review"
    bad = admin_client.post(decision_url(task), json=approve_article(task, cover), headers={"If-Match": "soon"})
    assert_error(bad, 400, "validation_error")
    good = admin_client.post(decision_url(task), json=approve_article(task, cover), headers={"If-Match": '"1"'})
    assert good.status_code == 200 and good.headers["ETag"] == '"2"'


def test_decision_auth_and_unknown_task(client, admin_client, agent_headers, article):
    task, cover = article
    assert_error(
        client.post(decision_url(task), json=approve_article(task, cover), headers=agent_headers), 401, "unauthorized"
    )
    assert_error(client.post("/api/review/tasks/nope/decision", json={}), 401, "unauthorized")
    assert_error(
        admin_client.post("/api/review/tasks/nope/decision", json=approve_article(task, cover)), 404, "not_found"
    )
    cross = admin_client.post(
        decision_url(task), json=approve_article(task, cover), headers={"Origin": "https://evil.example"}
    )
    assert_error(cross, 403, "forbidden")
    assert error_paths(
        admin_client.post(decision_url(task), json={"action": "approve_without_publish", "extra": 1})
    ) == {"extra"}


def test_a_decision_body_over_the_json_limit_is_413_before_it_is_parsed(admin_client, article):
    from blueprints.bodies import JSON_MAX_BYTES

    task, cover = article
    body = approve_article(task, cover)
    body["selections"]["title"] = ""
    # One byte over, and invalid too (title too long): the size answers first.
    body["selections"]["title"] = "t" * (JSON_MAX_BYTES - len(json.dumps(body)) + 1)
    data = json.dumps(body)
    assert len(data) == JSON_MAX_BYTES + 1
    error = assert_error(
        admin_client.post(decision_url(task), data=data, content_type="application/json"), 413, "payload_too_large"
    )
    assert error["details"] == {"_body": [f"larger than {JSON_MAX_BYTES} bytes"]}
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["status"] == "pending_review"
