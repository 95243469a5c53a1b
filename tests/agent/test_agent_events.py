"""Outcome events to the agent (docs/api.md §13): chosen types sent, signed, in order per task, after an outage.

Signatures are checked with the `standardwebhooks` library's own Webhook.verify, not our code.
"""

import base64
import json
import socket

import pytest
from standardwebhooks import Webhook

from models import OutboxMessage, db
from rules.vocabulary import WEBHOOK_EVENTS
from services.review import webhooks as notifications
from tests.helpers.publishing import platform_settings, retry_url
from tests.helpers.review import (
    approve_article,
    article_payload,
    article_selections,
    create_task,
    decision_url,
    locked_except,
    make_asset,
    patch_url,
)
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

SECRET = "whsec_" + base64.b64encode(b"agent-events-secret-0123456789ab").decode()
ALL = ",".join(WEBHOOK_EVENTS)


def served(make_app, fake, receiver, events):
    """The service with its webhook sender running, pointed at the receiver."""
    return make_app(
        **platform_settings(fake),
        WEBHOOK_SENDER_ENABLED=True,
        TEAM_MESSAGES_ENABLED=True,
        CHAT_CARDS_ENABLED=True,
        REVIEW_AGENT_WEBHOOK_URL=receiver.url,
        REVIEW_AGENT_WEBHOOK_SECRET=SECRET,
        REVIEW_AGENT_WEBHOOK_EVENTS=events,
        REVIEW_WEBHOOK_RETRY_DELAYS="0.2,0.2,0.2",
    )


def settled_outbox(app, timeout=10):
    """{event type: status} once the running sender has nothing pending."""
    with app.app_context(), db.connection_context():
        pending = OutboxMessage.select().where(OutboxMessage.status == "pending")
        wait_until(lambda: not pending.exists(), timeout, "the sender did not settle the outbox")
        return {m.event_type: m.status for m in OutboxMessage.select()}


def verified(receiver):
    """Every body received, each verified by the third-party Standard Webhooks verifier."""
    hook = Webhook(SECRET)
    return [hook.verify(body, headers) for headers, body in receiver.received]


def full_lifecycle(app, fake, agent_headers):
    """Rejected, patched, approved and published with a failed first try, then retried: every event."""
    from tests.helpers.app import signed_in_admin

    admin = signed_in_admin(app)
    cover = make_asset(app, 900, 500)
    task = create_task(admin, agent_headers, article_payload())
    selections = article_selections(task, cover)
    rejected = admin.post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "rejectedElements": ["title"],
            "rejectionReason": "style_mismatch",
            "rejectionNote": "太长",
            "selections": selections,
            "lockedSelections": locked_except(selections, ["title"]),
        },
    )
    assert rejected.status_code == 200, rejected.get_json()
    patched = admin.patch(patch_url(task), headers=agent_headers, json={"title": "更短的标题"})
    assert patched.status_code == 200, patched.get_json()
    fake.fail_next("draft/add", errcode=45009, errmsg="reach max api daily quota limit")
    approved = admin.post(
        decision_url(task),
        json={
            **approve_article(task, cover, "approve_and_publish"),
            "selections": {**selections, "title": "更短的标题"},
        },
    )
    assert approved.status_code == 200, approved.get_json()
    [job] = approved.get_json()["publishJobs"]
    assert job["status"] == "failed"
    retried = admin.post(retry_url(task, job))
    assert retried.status_code == 200, retried.get_json()
    return task, job, retried.get_json()["publishJobs"][-1]


def test_every_outcome_event_is_sent_signed_and_in_order(make_app, fake, receiver, agent_headers):
    app = served(make_app, fake, receiver, ALL)
    task, failed, succeeded = full_lifecycle(app, fake, agent_headers)
    assert receiver.wait_for(4)
    payloads = verified(receiver)
    assert [p["type"] for p in payloads] == [
        "review_task.rejected",
        "review_task.approved",
        "review_task.publish_failed",
        "review_task.published",
    ]
    rejected, approved, publish_failed, published = (p["data"] for p in payloads)
    assert rejected["rejectedElements"] == ["title"] and rejected["taskId"] == task["id"]
    assert approved == {
        "taskId": task["id"],
        "publicAccount": "silicon-rise",
        "contentType": "article",
        "topic": task["topic"],
        "action": "approve_and_publish",
    }
    assert publish_failed == {
        "taskId": task["id"],
        "jobId": failed["id"],
        "attemptCount": 1,
        "lastError": failed["lastError"],
    }
    assert "45009" in publish_failed["lastError"]
    assert published == {
        "taskId": task["id"],
        "jobId": succeeded["id"],
        "triggerMode": "manual",
        "draftMediaId": succeeded["draftMediaId"],
    }


def test_the_default_sends_rejections_only_and_records_the_rest(make_app, fake, receiver, agent_headers):
    app = served(make_app, fake, receiver, "review_task.rejected")
    full_lifecycle(app, fake, agent_headers)
    rows = settled_outbox(app)
    assert [p["type"] for p in verified(receiver)] == ["review_task.rejected"]
    assert rows == {
        "review_task.rejected": "sent",
        "review_task.approved": "not_sent",
        "review_task.publish_failed": "not_sent",
        "review_task.published": "not_sent",
    }


def test_only_the_chosen_outcome_is_sent(make_app, fake, receiver, agent_headers):
    app = served(make_app, fake, receiver, "review_task.published")
    full_lifecycle(app, fake, agent_headers)
    assert set(settled_outbox(app).values()) == {"sent", "not_sent"}
    assert [p["type"] for p in verified(receiver)] == ["review_task.published"]


def closed_port_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks"  # nothing listens there any more


def test_a_receiver_that_was_down_gets_one_tasks_events_in_order(make_app, fake, receiver, agent_headers):
    """While the first event of a task waits for its retry, the task's later events wait behind it;
    another task's events are not held up."""
    app = make_app(**platform_settings(fake))
    from tests.helpers.app import signed_in_admin

    admin = signed_in_admin(app)
    cover = make_asset(app, 900, 500)
    first = create_task(admin, agent_headers, article_payload())
    other = create_task(admin, agent_headers, article_payload())
    assert admin.post(decision_url(first), json=approve_article(first, cover, "approve_and_publish")).status_code == 200

    def deliver(url):
        with app.app_context(), db.connection_context():
            return notifications.deliver_due(url, SECRET, (0.0, 0.0, 0.0), events=tuple(WEBHOOK_EVENTS))

    assert deliver(closed_port_url()) == 1  # first's approval, to a receiver that is down
    assert receiver.received == []
    assert admin.post(decision_url(other), json=approve_article(other, cover)).status_code == 200
    receiver.fail_statuses = [503]  # back, but failing once more
    assert deliver(receiver.url) == 2  # first's approval (503) and other's; first's published waits
    while deliver(receiver.url):
        pass
    with app.app_context(), db.connection_context():
        statuses = [m.status for m in OutboxMessage.select()]
    delivered = [(json.loads(body)["type"], json.loads(body)["data"]["taskId"]) for _, body in receiver.received]
    assert delivered == [
        ("review_task.approved", first["id"]),  # 503
        ("review_task.approved", other["id"]),
        ("review_task.approved", first["id"]),  # the retry, before the next of its task
        ("review_task.published", first["id"]),
    ]
    assert statuses == ["sent"] * 3
    verified(receiver)  # every attempt carries a valid signature, the failed one too


def test_the_document_describes_every_event_as_sent(make_app, fake, receiver, agent_headers):
    """Each x-webhooks entry validates the body the service sends (docs/api.md §13)."""
    from tests.helpers.openapi import schema_validator

    app = served(make_app, fake, receiver, ALL)
    full_lifecycle(app, fake, agent_headers)
    assert receiver.wait_for(4)
    document = app.test_client().get("/api/openapi.json").get_json()
    assert set(document["x-webhooks"]) == set(WEBHOOK_EVENTS)
    for payload in verified(receiver):
        entry = document["x-webhooks"][payload["type"]]["post"]
        ref = entry["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        validator = schema_validator(document, ref)
        assert list(validator.iter_errors(payload)) == []
        wrong = {**payload, "type": "review_task.something_else"}
        assert list(validator.iter_errors(wrong)), "the check can fail"
