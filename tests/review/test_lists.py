"""Task lists on a few hundred tasks: filters, date bounds, ordering, keyset paging; state doc; OpenAPI."""

import base64
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from models import ReviewTask, db
from services.review import create_task as create_in_service
from services.review.state_machine import render_markdown
from tests.helpers.app import assert_error
from tests.helpers.review import article_payload

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
ACCOUNTS = ("silicon-rise", "carbon-fitness")
STATUSES = ("pending_review", "approved", "published", "rejected_rework")


@pytest.fixture
def many(app):
    """300 tasks over 10 days (30 a day), both accounts, every status, distinct updatedAt."""
    rows = []
    with db.connection_context(), db.atomic():
        for i in range(300):
            payload = article_payload(publicAccount=ACCOUNTS[(i // 4) % 2], externalContentId=f"ext-{i}")
            payload["contentType"] = "article"
            _status, body, _ = create_in_service(payload)
            day = 10 + i // 30
            created = f"2026-03-{day:02d}T{(i % 30) // 2:02d}:{(i % 2) * 30:02d}:00.000Z"
            updated = f"2026-04-01T00:{i // 60:02d}:{i % 60:02d}.000Z"
            ReviewTask.update(status=STATUSES[i % 4], created_at=created, updated_at=updated).where(
                ReviewTask.task_id == body["id"]
            ).execute()
            rows.append(
                {
                    "id": body["id"],
                    "account": ACCOUNTS[(i // 4) % 2],
                    "status": STATUSES[i % 4],
                    "created": created,
                    "updated": updated,
                    "ext": f"ext-{i}",
                }
            )
    return rows


def listing(client, query, **kwargs):
    response = client.get("/api/review/tasks" + query, **kwargs)
    assert response.status_code == 200, response.get_data(as_text=True)[:400]
    return response


def ids(response):
    body = response.get_json()
    assert isinstance(body, list)
    return [task["id"] for task in body]


def newest_first(rows):
    return [row["id"] for row in sorted(rows, key=lambda r: r["updated"], reverse=True)]


def test_default_is_pending_review_newest_update_first(admin_client, many):
    response = listing(admin_client, "")
    expected = newest_first([r for r in many if r["status"] == "pending_review"])
    assert ids(response) == expected
    assert response.headers["X-Total-Count"] == str(len(expected)) == "75"
    assert "Link" not in response.headers
    first = response.get_json()[0]
    assert {"candidates", "timeline", "publishJobs", "version"} <= set(first)


# (query, which of `many` it finds)
FILTERS = [
    ("?status=all", lambda r: True),
    ("?status=approved", lambda r: r["status"] == "approved"),
    ("?status=all&publicAccount=carbon-fitness", lambda r: r["account"] == "carbon-fitness"),
    (
        "?status=rejected_rework&publicAccount=silicon-rise",
        lambda r: r["status"] == "rejected_rework" and r["account"] == "silicon-rise",
    ),
    ("?status=all&from=2026-03-12&to=2026-03-13", lambda r: "2026-03-12" <= r["created"][:10] <= "2026-03-13"),
    ("?status=all&to=2026-03-10", lambda r: r["created"][:10] == "2026-03-10"),
    ("?status=all&from=2026-03-19T14:00:00Z", lambda r: r["created"] >= "2026-03-19T14:00:00.000Z"),
    (
        "?status=all&from=2026-03-15T05:30:00.000Z&to=2026-03-15T05:30:00.000Z",
        lambda r: r["created"] == "2026-03-15T05:30:00.000Z",
    ),
    ("?status=all&to=2026-03-11T02:00:00%2B08:00", lambda r: r["created"] <= "2026-03-10T18:00:00.000Z"),
]


def test_filters(admin_client, many):
    wrong = []  # every query on the one set of tasks, each named where it fails
    for query, keep in FILTERS:
        expected = newest_first([r for r in many if keep(r)])
        response = listing(admin_client, query + "&limit=1000")
        if not expected or (ids(response), response.headers["X-Total-Count"]) != (expected, str(len(expected))):
            wrong.append(query)
    assert wrong == []


def test_paging_follows_link_next_through_every_match(admin_client, many):
    expected = newest_first([r for r in many if r["account"] == "silicon-rise"])
    seen, url, pages = [], "/api/review/tasks?status=all&publicAccount=silicon-rise&limit=40", 0
    while url:
        response = admin_client.get(url)
        assert response.status_code == 200
        assert response.headers["X-Total-Count"] == str(len(expected)) == "152"
        page = ids(response)
        assert len(page) <= 40
        seen += page
        pages += 1
        link = response.headers.get("Link")
        if link:
            assert link.endswith('>; rel="next"') and link.startswith("<http")
            parts = urlsplit(link[1 : link.index(">")])
            url = f"{parts.path}?{parts.query}"
            assert "publicAccount=silicon-rise" in parts.query and "limit=40" in parts.query
        else:
            url = None
    assert pages == 4
    assert seen == expected


def test_paging_is_stable_when_updates_tie(admin_client, many):
    with db.connection_context():
        ReviewTask.update(updated_at="2026-05-01T00:00:00.000Z").execute()
    seen, url = [], "/api/review/tasks?status=all&limit=64"
    while url:
        response = admin_client.get(url)
        seen += ids(response)
        link = response.headers.get("Link")
        url = (lambda p: f"{p.path}?{p.query}")(urlsplit(link[1 : link.index(">")])) if link else None
    assert sorted(seen) == sorted(r["id"] for r in many) and len(set(seen)) == 300


def _cursor(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "query, path",
    [
        ("?status=done", "status"),
        ("?publicAccount=moon", "publicAccount"),
        ("?from=yesterday", "from"),
        ("?to=2026-13-01", "to"),
        ("?from=2026-03-12&to=2026-03-11", "from"),
        ("?from=2026-03-12T00:00:01Z&to=2026-03-12T00:00:00Z", "from"),
        ("?limit=0", "limit"),
        ("?limit=1001", "limit"),
        ("?limit=ten", "limit"),
        ("?cursor=not-a-cursor", "cursor"),
        # Well-formed but out of SQLite's 64-bit range (was a 500 from an OverflowError), or not an id.
        ("?cursor=" + _cursor(["2026-11-22T00:00:00.000Z", 10**30]), "cursor"),
        ("?cursor=" + _cursor(["2026-11-22T00:00:00.000Z", -(10**30)]), "cursor"),
        ("?cursor=" + _cursor(["2026-11-22T00:00:00.000Z", True]), "cursor"),
    ],
)
def test_bad_queries_are_400(admin_client, query, path):
    error = assert_error(admin_client.get("/api/review/tasks" + query), 400, "validation_error")
    assert path in error["details"], error["details"]


def test_same_day_bounds_are_valid(admin_client, many):
    response = listing(admin_client, "?status=all&from=2026-03-14&to=2026-03-14")
    assert response.headers["X-Total-Count"] == "30"


def test_list_auth(client, agent_headers):
    assert_error(client.get("/api/review/tasks"), 401, "unauthorized")
    assert_error(client.get("/api/review/tasks", headers=agent_headers), 401, "unauthorized")
    assert_error(client.get("/api/review/agent/tasks"), 401, "unauthorized")


def test_agent_list_has_the_same_filters_plus_external_id(client, agent_headers, many):
    response = client.get("/api/review/agent/tasks?status=all&externalContentId=ext-7", headers=agent_headers)
    assert response.status_code == 200
    assert ids(response) == [many[7]["id"]] and response.headers["X-Total-Count"] == "1"
    waiting = client.get("/api/review/agent/tasks?status=rejected_rework&limit=10", headers=agent_headers)
    expected = newest_first([r for r in many if r["status"] == "rejected_rework"])
    assert ids(waiting) == expected[:10] and waiting.headers["X-Total-Count"] == str(len(expected))
    assert 'rel="next"' in waiting.headers["Link"] and "/api/review/agent/tasks?" in waiting.headers["Link"]
    assert_error(
        client.get("/api/review/agent/tasks?from=2026-03-12&to=2026-03-01", headers=agent_headers),
        400,
        "validation_error",
    )


def test_agent_lists_what_changed_since_a_moment(client, agent_headers, many):
    """updatedSince (the MCP tool's filter, docs/api.md §13): updatedAt at or after the bound, inclusive."""
    bound = "2026-04-01T00:04:00.000Z"
    response = client.get(f"/api/review/agent/tasks?status=all&updatedSince={bound}", headers=agent_headers)
    expected = newest_first([r for r in many if r["updated"] >= bound])
    assert ids(response) == expected and len(expected) == 60
    pending = client.get(f"/api/review/agent/tasks?updatedSince={bound}", headers=agent_headers)
    assert ids(pending) == newest_first([r for r in many if r["updated"] >= bound and r["status"] == "pending_review"])
    error = assert_error(
        client.get("/api/review/agent/tasks?updatedSince=yesterday", headers=agent_headers), 400, "validation_error"
    )
    assert "updatedSince" in error["details"]
    empty = client.get("/api/review/agent/tasks?status=all&updatedSince=", headers=agent_headers)
    assert ids(empty) == newest_first(many)[:200]  # empty: not given


def test_state_document_is_generated_from_the_table():
    assert (ROOT / "docs" / "review-states.md").read_text() == render_markdown()


def test_openapi_documents_every_review_shape(client):
    doc = client.get("/api/openapi.json").get_json()
    schemas = doc["components"]["schemas"]
    for name in (
        "CreateTask",
        "Candidates",
        "BodyOption",
        "ImageGroup",
        "Decision",
        "PatchElements",
        "Selections",
        "ManualOverrides",
        "BodyDraft",
        "CoverCrop",
        "CommentSettings",
        "Task",
        "TimelineEvent",
        "PublishJob",
        "CropPercent",
    ):
        assert name in schemas, name
    paths = doc["paths"]
    assert {"post", "get"} <= set(paths["/api/review/agent/tasks"])
    assert "patch" in paths["/api/review/agent/tasks/{task_id}/elements"]
    assert "post" in paths["/api/review/tasks/{task_id}/decision"]
    assert (
        paths["/api/review/tasks"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["type"]
        == "array"
    )
    assert schemas["Decision"]["properties"]["action"]["enum"] == [
        "approve_and_publish",
        "approve_without_publish",
        "reject_rework",
    ]
