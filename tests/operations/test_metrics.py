"""GET /metrics (docs/api.md §11): hidden without its setting, bearer token, counters that move exactly."""

import re

import pytest

from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.feedback import payload
from tests.helpers.metrics import BEARER, TOKEN, scrape, value
from tests.helpers.review import approve_article, article_payload, create_task, make_asset

WEB = {"x-feedback-client-token": "client-web-token"}


def test_metrics_are_hidden_without_the_setting(client):
    assert_error(client.get("/metrics", headers=BEARER), 404, "not_found")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
def test_metrics_need_the_bearer_token(make_app, headers):
    client = make_app(METRICS_TOKEN=TOKEN).test_client()
    assert_error(client.get("/metrics", headers=headers), 401, "unauthorized")


def test_counters_move_by_exactly_the_requests_made(make_app, agent_headers):
    app = make_app(METRICS_TOKEN=TOKEN, FEEDBACK_RATE_LIMIT_PER_DEVICE="2/minute")
    client = app.test_client()
    before = scrape(client)
    task = create_task(client, agent_headers, article_payload())
    for _ in range(2):
        assert client.get(f"/api/review/agent/tasks/{task['id']}", headers=agent_headers).status_code == 200
    assert client.get("/api/review/agent/tasks/no-such-task", headers=agent_headers).status_code == 404
    body = payload(deviceId="device-1")
    assert client.post("/api/feedbacks", json=body, headers=WEB).status_code == 201
    assert client.post("/api/feedbacks", json=body, headers=WEB).status_code == 409
    assert client.post("/api/feedbacks", json=payload(deviceId="device-1"), headers=WEB).status_code == 429
    assert client.post("/api/feedbacks", json={"type": "bug"}, headers=WEB).status_code == 400
    create_admin()
    admin = app.test_client()
    login(admin)
    decision = admin.post(
        f"/api/review/tasks/{task['id']}/decision", json={"action": "reject_rework", "rejectionReason": "other"}
    )
    assert decision.status_code == 200, decision.get_json()
    after = scrape(client)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    rule = "/api/review/agent/tasks/<task_id>"
    assert moved("http_requests_total", method="GET", route=rule, status=200) == 2
    assert moved("http_requests_total", method="GET", route=rule, status=404) == 1
    assert moved("http_requests_total", method="POST", route="/api/review/agent/tasks", status=201) == 1
    assert moved("http_request_duration_seconds_count", route=rule) == 3
    assert moved("http_requests_total", method="GET", route="/metrics", status=200) == 1  # the first scrape
    assert not any("no-such-task" in series or task["id"] in series for series in after)  # rules, not paths
    assert moved("feedback_created_total", channel="web") == 1
    for reason in ("duplicate", "rate_limited", "invalid"):
        assert moved("feedback_rejected_total", reason=reason) == 1
    assert moved("feedback_rejected_total", reason="too_large") == 0
    assert value(after, "review_tasks", status="rejected_rework") == 1
    assert value(after, "review_tasks", status="pending_review") == 0
    # No REVIEW_AGENT_WEBHOOK_URL: the rejection's notification is recorded only, never sent, not waiting.
    assert value(after, "review_webhook_outbox_pending") == 0
    assert value(after, "feedback_records", status="unprocessed") == 1


def test_outbox_gauge_counts_only_what_will_be_sent(make_app, agent_headers):
    """With a URL, the rejection waits to be sent (the sender is off in tests); an approval, a type
    REVIEW_AGENT_WEBHOOK_EVENTS does not choose, is recorded only and not counted."""
    app = make_app(METRICS_TOKEN=TOKEN, REVIEW_AGENT_WEBHOOK_URL="http://127.0.0.1:9/hook")
    client = app.test_client()
    rejected = create_task(client, agent_headers, article_payload())
    cover = make_asset(app, 900, 500)
    approved = create_task(client, agent_headers, article_payload([cover["url"]]))
    create_admin()
    admin = app.test_client()
    login(admin)
    assert (
        admin.post(
            f"/api/review/tasks/{rejected['id']}/decision", json={"action": "reject_rework", "rejectionReason": "other"}
        ).status_code
        == 200
    )
    approval = admin.post(f"/api/review/tasks/{approved['id']}/decision", json=approve_article(approved, cover))
    assert approval.status_code == 200, approval.get_json()
    assert value(scrape(client), "review_webhook_outbox_pending") == 1


def test_invented_methods_share_one_series(make_app):
    app = make_app(METRICS_TOKEN=TOKEN)
    client = app.test_client()
    for number in range(50):
        client.open("/healthz", method=f"BREW{number}" + "X" * 200)
    client.open("/healthz", method="PROPFIND")
    after = scrape(client)
    methods = {
        re.search(r'method="([^"]*)"', series).group(1) for series in after if series.startswith("http_requests_total")
    }
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "other"}
    assert (
        sum(
            number
            for series, number in after.items()
            if series.startswith("http_requests_total") and 'method="other"' in series
        )
        == 51
    )


def test_process_metrics_are_exposed(make_app):
    after = scrape(make_app(METRICS_TOKEN=TOKEN).test_client())
    assert value(after, "process_resident_memory_bytes") > 1_000_000
    assert value(after, "process_open_fds") > 0
