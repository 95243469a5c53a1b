"""An article created with titles only (spec creation rule 1): accepted, and workable end to end —
the reviewer writes the body, or rejects it for the agent to write; approval, rework, publishing and
the package all work with a body that names no source option."""

import io
import zipfile

import pytest

from tests.helpers.app import assert_error
from tests.helpers.publishing import events_of
from tests.helpers.review import create_task, decision_url, make_asset, patch_url

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

BODY = "# 芯片\n\n评审人自己写的正文。"


@pytest.fixture
def app(platform_app):
    """The service pointed at the fake platform (tests/conftest.py)."""
    return platform_app


def titles_only(**candidates):
    return {
        "publicAccount": "silicon-rise",
        "topic": "只有标题",
        "contentType": "article",
        "candidates": {"titles": ["只有标题的文章", "另一个标题"], **candidates},
    }


def selections(cover, body=BODY):
    return {"title": "只有标题的文章", "summary": "摘要", "body": body, "coverImage": {"assetId": cover["assetId"]}}


def test_titles_only_is_accepted_and_the_page_shows_a_body_to_write(app, admin_client, agent_headers):
    task = create_task(admin_client, agent_headers, titles_only())
    assert task["status"] == "pending_review" and "bodyOptions" not in task["candidates"]
    page = admin_client.get(f"/review/{task['id']}")
    assert page.status_code == 200 and 'id="no-body-options"' in page.get_data(as_text=True)
    # Still at least one kind of content: empty candidates stay refused.
    empty = {**titles_only(), "candidates": {"titles": []}}
    assert_error(
        admin_client.post("/api/review/agent/tasks", json=empty, headers=agent_headers), 400, "validation_error"
    )


def test_the_reviewer_writes_the_body_approves_and_publishes(app, admin_client, agent_headers, fake):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, titles_only())
    decision = {
        "action": "approve_and_publish",
        "selections": selections(cover),
        "bodyDraft": {"markdown": BODY, "sourceBodyCandidateId": None, "themeTemplate": "tech-blue"},
    }
    done = admin_client.post(decision_url(task), json=decision)
    assert done.status_code == 200, done.get_json()
    task = done.get_json()
    assert task["status"] == "published"
    assert task["bodyDraft"] == {
        "markdown": BODY,
        "sourceBodyCandidateId": None,
        "sourceBodyCandidate": None,
        "bodyEditedFromCandidate": True,
        "themeTemplate": "tech-blue",
    }
    assert "body" not in (task.get("manualOverrides") or {})  # the reviewer's own body edits no candidate
    [job] = task["publishJobs"]
    assert job["snapshot"]["bodyMarkdown"] == BODY and job["snapshot"]["bodyEditedFromCandidate"] is True
    [draft] = fake.drafts.values()
    assert "评审人自己写的正文" in draft["articles"][0]["content"]
    package = admin_client.get(f"/api/review/tasks/{task['id']}/package")
    assert package.status_code == 200
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        assert "评审人自己写的正文" in archive.read("manuscript.md").decode()


def test_without_a_submitted_draft_the_written_body_is_taken_as_is(app, admin_client, agent_headers):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, titles_only())
    done = admin_client.post(
        decision_url(task), json={"action": "approve_without_publish", "selections": selections(cover)}
    )
    assert done.status_code == 200, done.get_json()
    assert done.get_json()["bodyDraft"]["sourceBodyCandidateId"] is None


def test_approval_still_needs_a_body(app, admin_client, agent_headers):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, titles_only())
    without = {key: value for key, value in selections(cover).items() if key != "body"}
    error = assert_error(
        admin_client.post(decision_url(task), json={"action": "approve_without_publish", "selections": without}),
        400,
        "validation_error",
    )
    assert "selections.body" in error["details"]


def test_a_source_id_is_refused_where_there_is_no_option_and_null_where_there_are(app, admin_client, agent_headers):
    cover = make_asset(app, 900, 500)
    bare = create_task(admin_client, agent_headers, titles_only())
    named = {
        "action": "approve_without_publish",
        "selections": selections(cover),
        "bodyDraft": {"markdown": BODY, "sourceBodyCandidateId": "opt-a"},
    }
    error = assert_error(admin_client.post(decision_url(bare), json=named), 400, "validation_error")
    assert "bodyDraft.sourceBodyCandidateId" in error["details"]
    option = {"id": "opt-a", "outline": "一|二", "focuses": ["x"], "content": "# 候选正文"}
    with_options = create_task(admin_client, agent_headers, titles_only(bodyOptions=[option]))
    unnamed = {**named, "bodyDraft": {"markdown": BODY, "sourceBodyCandidateId": None}}
    error = assert_error(admin_client.post(decision_url(with_options), json=unnamed), 400, "validation_error")
    assert "required" in error["details"]["bodyDraft.sourceBodyCandidateId"][0]


def test_the_body_rejected_for_the_agent_to_write_then_approved(app, admin_client, agent_headers, fake):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, titles_only())
    chosen = {key: value for key, value in selections(cover).items() if key != "body"}
    rejected = admin_client.post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "rejectedElements": ["body"],
            "rejectionReason": "content_quality",
            "rejectionNote": "请写正文",
            "selections": chosen,
            "lockedSelections": chosen,
        },
    )
    assert rejected.status_code == 200, rejected.get_json()
    assert rejected.get_json()["status"] == "rejected_rework"
    agent_body = "# 芯片\n\n代理补写的正文。"
    patched = admin_client.patch(patch_url(task), json={"body": agent_body}, headers=agent_headers)
    assert patched.status_code == 200, patched.get_json()
    patched = patched.get_json()
    assert patched["status"] == "pending_review"
    assert patched["bodyDraft"]["markdown"] == agent_body and patched["bodyDraft"]["sourceBodyCandidateId"] is None
    approved = admin_client.post(
        decision_url(task), json={"action": "approve_and_publish", "selections": selections(cover, agent_body)}
    )
    assert approved.status_code == 200, approved.get_json()
    assert approved.get_json()["status"] == "published"
    assert events_of(approved.get_json(), "publish_succeeded")
    [draft] = fake.drafts.values()
    assert "代理补写的正文" in draft["articles"][0]["content"]
