"""Agent notifications: outbox, Standard Webhooks signing, retries, restart (docs/api.md §4)."""

import base64
import hashlib
import hmac
import json
from datetime import timedelta

import pytest

from models import OutboxMessage, db
from rules.ids import utcnow
from services.background import wake
from services.review import webhooks as notifications
from tests.helpers.review import sent_back_task
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


def enqueue(task_id="task_1"):
    with db.connection_context(), db.atomic():
        return notifications.enqueue_rejection(sent_back_task(task_id))


def verify(headers, body, secret=SECRET):
    expected = notifications.sign(secret, headers["webhook-id"], headers["webhook-timestamp"], body)
    given = headers["webhook-signature"]
    # Independent computation of the Standard Webhooks signature, not via the service code.
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    independent = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return given == expected == independent


def test_payload_and_signature_verify(app, receiver):
    enqueue()
    with db.connection_context():
        assert notifications.deliver_due(receiver.url, SECRET) == 1
    headers, body = receiver.received[0]
    assert verify(headers, body)
    payload = json.loads(body.decode())
    assert payload["type"] == "review_task.rejected"
    assert payload["data"] == {
        "taskId": "task_1",
        "publicAccount": "silicon-rise",
        "contentType": "article",
        "topic": "芯片的未来",
        "rejectedElements": ["title"],
        "rejectionReason": "style_mismatch",
        "rejectionNote": "标题太长",
    }
    assert "芯片".encode() in body  # UTF-8, not \u escapes
    with db.connection_context():
        assert OutboxMessage.get().status == "sent"


def test_tampered_body_does_not_verify(app, receiver):
    enqueue()
    with db.connection_context():
        notifications.deliver_due(receiver.url, SECRET)
    headers, body = receiver.received[0]
    assert not verify(headers, body.replace(b"style_mismatch", b"other_reason__"))


def test_plain_string_secret_and_unsigned(app, receiver):
    assert notifications.signing_key("plain-secret") == b"plain-secret"
    assert notifications.signing_key("whsec_not base64!") == b"whsec_not base64!"
    # `whsec_` with no key after it is a string like any other (the signing library refuses an empty key)
    assert notifications.signing_key("whsec_") == b"whsec_"
    assert notifications.sign("whsec_", "msg_1", "1700000000", b"{}").startswith("v1,")
    enqueue()
    with db.connection_context():
        notifications.deliver_due(receiver.url, "")
    headers, _ = receiver.received[0]
    assert "webhook-signature" not in headers
    assert headers["webhook-id"].startswith("msg_")


def test_retry_after_500_keeps_id_and_grows_delay(app, receiver):
    receiver.fail_statuses = [500, 503]
    enqueue()
    with db.connection_context():
        notifications.deliver_due(receiver.url, SECRET)
        first = OutboxMessage.get()
        assert (first.status, first.attempts, first.last_error) == ("pending", 1, "receiver answered HTTP 500")
        # Not due yet: nothing is sent before the delay passes.
        assert notifications.deliver_due(receiver.url, SECRET) == 0
        later = utcnow() + timedelta(seconds=11)
        notifications.deliver_due(receiver.url, SECRET, now=later)
        second = OutboxMessage.get()
        assert second.attempts == 2
        assert second.next_attempt_at > first.next_attempt_at
        notifications.deliver_due(receiver.url, SECRET, now=utcnow() + timedelta(seconds=60))
        assert OutboxMessage.get().status == "sent"
    ids = {headers["webhook-id"] for headers, _ in receiver.received}
    assert len(receiver.received) == 3 and len(ids) == 1


def test_schedule_covers_at_least_an_hour_with_six_attempts():
    delays = notifications.DEFAULT_RETRY_DELAYS
    assert delays[0] <= 30
    assert len(delays) + 1 >= 6 and sum(delays) >= 3600
    assert list(delays) == sorted(delays)


def test_gives_up_after_the_schedule(app, receiver):
    receiver.fail_statuses = [500] * 5
    enqueue()
    with db.connection_context():
        for step in range(4):
            notifications.deliver_due(
                receiver.url, SECRET, retry_delays=(1, 1, 1), now=utcnow() + timedelta(seconds=5 * step)
            )
        message = OutboxMessage.get()
    assert (message.status, message.attempts) == ("gave_up", 4)


def test_unreachable_receiver_is_recorded_not_raised(app):
    enqueue()
    with db.connection_context():
        notifications.deliver_due("http://127.0.0.1:9/nothing-listens", SECRET)
        message = OutboxMessage.get()
    assert message.status == "pending" and message.last_error.startswith("receiver unreachable")


def test_no_url_keeps_the_message_recorded(app):
    enqueue()
    with db.connection_context():
        assert notifications.deliver_due("", SECRET) == 0
        assert OutboxMessage.get().status == "pending"


def test_background_sender_delivers_and_resumes_after_restart(make_app, receiver):
    receiver.fail_statuses = [500]
    config = {
        "WEBHOOK_SENDER_ENABLED": True,
        "TEAM_MESSAGES_ENABLED": True,
        "CHAT_CARDS_ENABLED": True,
        "REVIEW_AGENT_WEBHOOK_URL": receiver.url,
        "REVIEW_AGENT_WEBHOOK_SECRET": SECRET,
        "REVIEW_WEBHOOK_RETRY_DELAYS": "30",
    }
    first = make_app(**config)
    enqueue()
    assert receiver.wait_for(1, timeout=10), "first attempt should come within a few seconds"
    first.extensions["scheduler"].stop()
    with db.connection_context():
        assert OutboxMessage.get().status == "pending"
    # Restart with a short delay: the pending message is picked up from the database.
    second = make_app(**{**config, "REVIEW_WEBHOOK_RETRY_DELAYS": "0"})
    with db.connection_context():
        OutboxMessage.update(next_attempt_at="2000-01-01T00:00:00.000Z").execute()
    wake(notifications.SENDER)
    assert receiver.wait_for(2, timeout=10)
    second.extensions["scheduler"].stop()
    first_headers, _ = receiver.received[0]
    second_headers, second_body = receiver.received[1]
    assert first_headers["webhook-id"] == second_headers["webhook-id"]
    assert verify(second_headers, second_body)
    with db.connection_context():
        assert OutboxMessage.get().status == "sent"


def test_discard_for_task_removes_only_pending(app):
    enqueue("task_a")
    enqueue("task_b")
    with db.connection_context():
        OutboxMessage.update(status="sent").where(OutboxMessage.task_id == "task_b").execute()
        assert notifications.discard_for_task("task_a") == 1
        assert notifications.discard_for_task("task_b") == 0
        assert [m.task_id for m in OutboxMessage.select()] == ["task_b"]


def test_a_real_rejection_reaches_the_agent_and_is_recorded_in_the_timeline(make_app, receiver):
    """decision reject_rework -> outbox -> signed webhook -> agent_notified on the task's timeline."""
    from tests.helpers.app import AGENT_TOKEN, create_admin, login
    from tests.helpers.review import (
        article_payload,
        article_selections,
        create_task,
        decision_url,
        locked_except,
        make_asset,
    )

    app = make_app(
        WEBHOOK_SENDER_ENABLED=True,
        TEAM_MESSAGES_ENABLED=True,
        CHAT_CARDS_ENABLED=True,
        REVIEW_AGENT_WEBHOOK_URL=receiver.url,
        REVIEW_AGENT_WEBHOOK_SECRET=SECRET,
    )
    try:
        agent = {"x-review-agent-token": AGENT_TOKEN}
        client = app.test_client()
        cover = make_asset(app, 900, 500)
        task = create_task(client, agent, article_payload([cover["url"]]))
        create_admin()
        login(client)
        selections = article_selections(task, cover)
        response = client.post(
            decision_url(task),
            json={
                "action": "reject_rework",
                "rejectionReason": "style_mismatch",
                "rejectionNote": "标题再短一点",
                "rejectedElements": ["title"],
                "selections": selections,
                "lockedSelections": locked_except(selections, ["title"]),
            },
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        assert receiver.wait_for(1, timeout=10), "the webhook should arrive within a few seconds"
        headers, body = receiver.received[0]
        assert verify(headers, body)
        data = json.loads(body)["data"]
        assert (data["taskId"], data["rejectedElements"], data["rejectionNote"]) == (
            task["id"],
            ["title"],
            "标题再短一点",
        )

        def read_timeline():
            return client.get(f"/api/review/agent/tasks/{task['id']}", headers=agent).get_json()["timeline"]

        # The timeline entry is written right after the delivery succeeds.
        wait_until(lambda: any(e["type"] == "agent_notified" for e in read_timeline()), 15, "no agent_notified entry")
        timeline = read_timeline()
        types = [event["type"] for event in timeline]
        assert "rejected" in types and "agent_notified" in types
        notified = next(event for event in timeline if event["type"] == "agent_notified")
        assert notified["actor"] == "system" and notified["data"]["messageId"] == headers["webhook-id"]
    finally:
        app.extensions["scheduler"].stop()
