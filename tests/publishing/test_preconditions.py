"""Publish preconditions: state, permission, If-Match; the routes in the OpenAPI document."""

import json

import pytest

from tests.helpers.app import assert_error
from tests.helpers.publishing import approved_article, publish, publish_url
from tests.helpers.review import article_payload, create_task, make_asset

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


# ---- preconditions ------------------------------------------------------------------------------
def test_only_an_approved_unpublished_task_can_be_published(app, admin_client, agent_headers, fake):
    cover = make_asset(app, 900, 500)
    pending = create_task(admin_client, agent_headers, article_payload())
    assert_error(admin_client.post(publish_url(pending)), 409, "invalid_state")

    task, _ = approved_article(app, admin_client, agent_headers, cover=cover)
    publish(admin_client, task)
    error = assert_error(admin_client.post(publish_url(task)), 409, "invalid_state")
    assert "already published" in error["message"]

    assert_error(admin_client.post("/api/review/tasks/no-such-task/publish-jobs"), 404, "not_found")
    assert len(fake.drafts) == 1
    after = admin_client.get(f"/api/review/tasks/{pending['id']}").get_json()
    assert after["publishJobs"] == [] and after["version"] == pending["version"]


def test_publish_needs_the_review_permission(app, client, agent_headers, fake):
    from tests.helpers.app import create_admin, login

    assert_error(client.post("/api/review/tasks/x/publish-jobs"), 401, "unauthorized")
    assert_error(client.post("/api/review/tasks/x/publish-jobs/y/retry"), 401, "unauthorized")
    create_admin("helpdesk", permissions="feedback")
    login(client, "helpdesk")
    assert_error(client.post("/api/review/tasks/x/publish-jobs"), 403, "forbidden")
    assert fake.requests == []


def test_if_match_is_honoured(app, admin_client, agent_headers, fake):
    task, _ = approved_article(app, admin_client, agent_headers)

    assert_error(
        publish(admin_client, task, 412, headers={"If-Match": f'"{task["version"] - 1}"'}), 412, "precondition_failed"
    )
    assert fake.requests == []
    unchanged = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert unchanged["publishJobs"] == [] and unchanged["version"] == task["version"]

    published = publish(admin_client, task, headers={"If-Match": f'"{task["version"]}"'}).get_json()
    assert published["status"] == "published"


def test_the_bodiless_routes_refuse_a_body(app, admin_client, agent_headers, fake):
    """docs/api.md §5: publish-jobs and retry take no request body; nor does DELETE. {} and nothing pass."""
    task, _ = approved_article(app, admin_client, agent_headers)
    for body, details in (
        ({"x": 1}, {"x": ["Unknown field."]}),
        ([1], {"_body": ["not empty"]}),
        ("not json", {"_body": ["not empty"]}),
    ):
        data = body if isinstance(body, str) else json.dumps(body)
        error = assert_error(
            publish(admin_client, task, 400, data=data, content_type="application/json"), 400, "validation_error"
        )
        assert error["details"] == details
        error = assert_error(
            admin_client.delete(f"/api/review/tasks/{task['id']}", data=data, content_type="application/json"),
            400,
            "validation_error",
        )
        assert error["details"] == details
    assert fake.requests == []
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["publishJobs"] == []
    assert publish(admin_client, task, data="{}", content_type="application/json").get_json()["status"] == "published"
    assert admin_client.delete(f"/api/review/tasks/{task['id']}").status_code == 200


def test_publish_routes_are_in_the_openapi_document(app, client):
    paths = client.get("/api/openapi.json").get_json()["paths"]
    for path in ("/api/review/tasks/{task_id}/publish-jobs", "/api/review/tasks/{task_id}/publish-jobs/{job_id}/retry"):
        assert paths[path]["post"]["responses"]["200"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Task"
        }
        assert paths[path]["post"]["security"] == [{"adminSession": []}]
