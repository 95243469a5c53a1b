"""POST /api/feedbacks: creation, 401, 413, 400, the anonymous channel, duplicates (docs/api.md §9)."""

import json
import re
from datetime import timedelta

import pytest

from models import db
from models.feedback import Feedback, FeedbackDaySequence
from rules.ids import iso, utcnow
from tests.helpers.app import assert_error
from tests.helpers.feedback import MINI, UNLIMITED, WEB, payload, set_fields, submit

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

DETAIL_KEYS = {
    "id",
    "feedbackNo",
    "type",
    "title",
    "content",
    "appName",
    "appVersion",
    "platform",
    "userId",
    "contactEmail",
    "contactWechat",
    "buildNumber",
    "deviceModel",
    "osVersion",
    "deviceId",
    "pagePath",
    "occurredAt",
    "logText",
    "extra",
    "status",
    "adminNote",
    "processedAt",
    "processedBy",
    "attachments",
    "createdAt",
    "updatedAt",
    "channel",
}


def test_created_record_is_unprocessed_with_number_and_no_attachments(fb_client):
    body = payload(
        userId="u-1",
        contactEmail="a@example.com",
        contactWechat="wx-1",
        buildNumber="451",
        deviceModel="iPhone15,2",
        osVersion="iOS 18.1",
        deviceId="dev-1",
        pagePath="/home",
        occurredAt="2026-11-20T08:00:00+08:00",
        logText="E/boot: failed",
        extra={"envVersion": "release", "locale": "zh_CN", "screen": [1170, 2532]},
    )
    response = submit(fb_client, body)
    assert response.status_code == 201
    record = response.get_json()
    assert set(record) == DETAIL_KEYS
    assert record["status"] == "unprocessed" and record["attachments"] == []
    assert record["processedAt"] is None and record["processedBy"] is None and record["adminNote"] is None
    assert record["channel"] == "web"
    today = utcnow().strftime("%Y%m%d")
    assert record["feedbackNo"] == f"FB-{today}-0001"
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,64}", record["id"])
    assert record["occurredAt"] == "2026-11-20T00:00:00.000Z"  # normalized to UTC
    for key in ("title", "content", "userId", "contactEmail", "deviceId", "logText", "extra", "pagePath"):
        assert record[key] == body[key]
    assert submit(fb_client).get_json()["feedbackNo"] == f"FB-{today}-0002"


def test_feedback_numbers_restart_each_utc_day(fb_client, store):
    with db.connection_context():
        FeedbackDaySequence.create(day="20200101", last=41)
    first = submit(fb_client).get_json()
    assert first["feedbackNo"].endswith("-0001")
    assert submit(fb_client).get_json()["feedbackNo"].endswith("-0002")
    with db.connection_context():
        assert FeedbackDaySequence.get_by_id("20200101").last == 41


@pytest.mark.parametrize("headers", [{}, {"x-feedback-client-token": "wrong"}, {"x-review-agent-token": "x"}])
def test_missing_or_wrong_client_token_is_401(fb_client, headers):
    assert_error(submit(fb_client, headers=headers), 401, "unauthorized")
    with db.connection_context():
        assert Feedback.select().count() == 0


def test_no_configured_tokens_refuses_everyone(make_app):
    client = make_app(FEEDBACK_CLIENT_TOKENS="").test_client()
    assert_error(submit(client), 401, "unauthorized")


def test_body_over_the_limit_is_413_before_anything_else(make_app):
    client = make_app(FEEDBACK_MAX_BODY_BYTES=1024).test_client()
    big = payload(content="x" * 2000)
    assert_error(submit(client, big), 413, "payload_too_large")
    # Not parsed: an oversized body that is not even JSON is still 413, not 400.
    response = client.post("/api/feedbacks", data=b"{" * 5000, headers={**WEB, "Content-Type": "application/json"})
    assert_error(response, 413, "payload_too_large")
    # The token comes first.
    assert_error(submit(client, big, headers={}), 401, "unauthorized")
    assert submit(client, payload(content="x" * 500)).status_code == 201


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"type": ...}, "type"),
        ({"title": ...}, "title"),
        ({"content": ...}, "content"),
        ({"appName": ...}, "appName"),
        ({"appVersion": ...}, "appVersion"),
        ({"platform": ...}, "platform"),
        ({"type": "praise"}, "type"),
        ({"title": "  "}, "title"),
        ({"title": "t" * 201}, "title"),
        ({"content": "c" * 10_001}, "content"),
        ({"logText": "l" * 65_537}, "logText"),
        ({"title": 12}, "title"),
        ({"userId": ["u"]}, "userId"),
        ({"contactEmail": "not-an-email"}, "contactEmail"),
        ({"occurredAt": "yesterday"}, "occurredAt"),
        ({"extra": "text"}, "extra"),
        ({"extra": {"blob": "x" * 4100}}, "extra"),
        ({"source": "web"}, "source"),
        ({"platform": None}, "platform"),
    ],
)
def test_invalid_payloads_are_400_naming_the_field(fb_client, change, field):
    error = assert_error(submit(fb_client, payload(**change)), 400, "validation_error")
    assert field in error["details"], error
    with db.connection_context():
        assert Feedback.select().count() == 0


def test_limits_are_inclusive(fb_client):
    body = payload(title="t" * 200, content="c" * 10_000, logText="l" * 65_536, extra={"k": "v" * 4000})
    assert submit(fb_client, body).status_code == 201


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"type": NaN}', b""])
def test_a_body_that_is_not_a_json_object_is_400(fb_client, raw):
    response = fb_client.post("/api/feedbacks", data=raw, headers={**WEB, "Content-Type": "application/json"})
    assert_error(response, 400, "validation_error")


def test_types_come_from_the_setting(make_app):
    client = make_app(FEEDBACK_TYPES="idea,crash", **UNLIMITED).test_client()
    assert submit(client, payload(type="crash")).status_code == 201
    error = assert_error(submit(client, payload(type="bug")), 400, "validation_error")
    assert "idea, crash" in error["details"]["type"][0]


def test_anonymous_channel_accepts_only_the_diagnostic_fields(fb_client):
    allowed = payload(
        buildNumber="9",
        deviceModel="devtools",
        osVersion="Windows",
        pagePath="pages/index",
        occurredAt="2026-11-21T10:00:00Z",
        extra={"envVersion": "trial", "locale": "zh_CN"},
    )
    response = submit(fb_client, allowed, headers=MINI)
    assert response.status_code == 201
    assert response.get_json()["channel"] == "miniprogram"
    error = assert_error(
        submit(fb_client, payload(userId="openid-1", deviceId="d", contactWechat="w"), headers=MINI),
        400,
        "validation_error",
    )
    assert set(error["details"]) == {"userId", "deviceId", "contactWechat"}
    error = assert_error(
        submit(fb_client, payload(extra={"locale": "en", "openid": "o-1"}), headers=MINI), 400, "validation_error"
    )
    assert set(error["details"]) == {"extra.openid"}
    error = assert_error(submit(fb_client, payload(logText="stack"), headers=MINI), 400, "validation_error")
    assert "logText" in error["details"] and "anonymous" in error["message"]
    # An allowed field of the wrong type is a type error, not a field the channel may not send.
    error = assert_error(
        submit(fb_client, payload(extra={"envVersion": {"a": 1}}), headers=MINI), 400, "validation_error"
    )
    assert error["details"] == {"extra.envVersion": ["must be a string of at most 64 characters"]}
    assert error["message"] == "invalid body: extra.envVersion: must be a string of at most 64 characters"
    # The same fields are fine from a normal channel.
    assert submit(fb_client, payload(userId="u-1", extra={"openid": "o-1"})).status_code == 201


def test_same_fingerprint_within_24_hours_is_409_naming_the_original(fb_client):
    first = submit(fb_client, payload(title="Crash on start", content="It  crashes\nright away", userId="u-9"))
    original = first.get_json()
    # Case and white space do not make it different; the IP does not matter once userId is known.
    again = submit(
        fb_client, payload(title="crash ON start", content="it crashes right away", userId="u-9"), ip="10.9.9.9"
    )
    error = assert_error(again, 409, "duplicate_feedback")
    assert error["details"] == {"feedbackId": original["id"], "feedbackNo": original["feedbackNo"]}
    with db.connection_context():
        assert Feedback.select().count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"userId": "u-other"},
        {"type": "suggestion"},
        {"platform": "android"},
        {"appName": "other-app"},
        {"content": "a different text"},
    ],
)
def test_a_different_fingerprint_part_is_a_new_record(fb_client, change):
    base = payload(userId="u-1", content="same text")
    assert submit(fb_client, base).status_code == 201
    assert submit(fb_client, {**base, **change}).status_code == 201


def test_without_user_the_device_then_the_ip_identifies_the_sender(fb_client):
    base = payload(content="device text", deviceId="dev-1")
    assert submit(fb_client, base, ip="10.0.0.1").status_code == 201
    assert_error(submit(fb_client, base, ip="10.0.0.2"), 409, "duplicate_feedback")
    assert submit(fb_client, {**base, "deviceId": "dev-2"}, ip="10.0.0.1").status_code == 201
    anonymous = payload(content="no user, no device")
    assert submit(fb_client, anonymous, ip="10.0.0.1").status_code == 201
    assert_error(submit(fb_client, anonymous, ip="10.0.0.1"), 409, "duplicate_feedback")
    assert submit(fb_client, anonymous, ip="10.0.0.3").status_code == 201


def test_the_duplicate_window_is_24_hours(fb_client):
    body = payload(content="reported yesterday", userId="u-1")
    original = submit(fb_client, body).get_json()
    set_fields(original["id"], created_at=iso(utcnow() - timedelta(hours=24, minutes=1)))
    assert submit(fb_client, body).status_code == 201
    assert_error(submit(fb_client, body), 409, "duplicate_feedback")


def test_the_duplicate_window_is_a_setting_and_the_message_names_it(make_app):
    from tests.helpers.feedback import UNLIMITED

    client = make_app(**UNLIMITED, FEEDBACK_DUPLICATE_WINDOW_SECONDS=2 * 3600).test_client()
    body = payload(content="reported two hours ago", userId="u-2")
    original = submit(client, body).get_json()
    error = assert_error(submit(client, body), 409, "duplicate_feedback")
    assert error["message"].endswith("within the last 2 hours")
    set_fields(original["id"], created_at=iso(utcnow() - timedelta(hours=2, minutes=1)))
    assert submit(client, body).status_code == 201


def test_validation_comes_before_the_duplicate_check(fb_client):
    body = payload(content="checked first")
    assert submit(fb_client, body).status_code == 201
    assert_error(submit(fb_client, {**body, "unknownField": 1}), 400, "validation_error")


def test_stored_json_round_trips(fb_client):
    extra = {"envVersion": "develop", "nested": {"list": [1, 2.5, None, "中文"]}}
    record = submit(fb_client, payload(extra=extra)).get_json()
    with db.connection_context():
        raw = db.execute_sql(f"SELECT extra FROM feedback WHERE feedback_id = {db.param}", [record["id"]]).fetchone()[0]
    assert json.loads(raw) == extra == record["extra"]


def test_a_nul_in_any_text_is_refused_on_both_stores(fb_client, fb_admin):
    """A NUL in a title or a log was stored on SQLite and a 500 on PostgreSQL; now a 400 naming the field on
    both, nothing stored; an admin's note with one is refused the same way."""
    for field in ("title", "logText"):
        error = assert_error(submit(fb_client, payload(**{field: "a\u0000b"})), 400, "validation_error")
        assert f"NUL (\\u0000) in {field}" in error["message"] and field in error["details"], error
    with db.connection_context():
        assert Feedback.select().count() == 0
    feedback = submit(fb_client).get_json()
    noted = fb_admin.patch(
        f"/api/feedbacks/{feedback['id']}/status", json={"status": "processed", "adminNote": "n\u0000"}
    )
    assert_error(noted, 400, "validation_error")
    assert fb_admin.get(f"/api/feedbacks/{feedback['id']}").get_json()["status"] == "unprocessed"
