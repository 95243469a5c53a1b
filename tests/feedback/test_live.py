"""Feedback over a real threaded HTTP server: the duplicate race, the attachment-limit race and a
chunked body without Content-Length."""

import json
import os

import requests

from models import db
from models.feedback import Feedback, FeedbackAttachment
from tests.helpers.feedback import UNLIMITED, WEB, LiveServer, payload, run_together


def test_ten_identical_requests_at_once_create_one_record(make_app):
    app = make_app(**UNLIMITED)
    body = payload(title="同时提交", content="ten at once", deviceId="dev-race")
    with LiveServer(app) as server:
        responses = run_together(
            10, lambda _i: requests.post(f"{server.url}/api/feedbacks", json=body, headers=WEB, timeout=30)
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * 9, [r.text for r in responses]
    winner = next(r.json() for r in responses if r.status_code == 201)
    for response in responses:
        if response.status_code == 409:
            error = response.json()["error"]
            assert error["code"] == "duplicate_feedback"
            assert error["details"] == {"feedbackId": winner["id"], "feedbackNo": winner["feedbackNo"]}
    with db.connection_context():
        assert Feedback.select().count() == 1


def test_parallel_distinct_requests_get_distinct_numbers(make_app):
    app = make_app(**UNLIMITED)
    with LiveServer(app) as server:
        responses = run_together(
            8,
            lambda i: requests.post(
                f"{server.url}/api/feedbacks", json=payload(content=f"parallel {i}"), headers=WEB, timeout=30
            ),
        )
    assert [r.status_code for r in responses] == [201] * 8
    numbers = sorted(r.json()["feedbackNo"] for r in responses)
    assert [n[-4:] for n in numbers] == [f"{n:04d}" for n in range(1, 9)]


def test_parallel_uploads_never_pass_ten_and_leave_no_stray_files(make_app):
    app = make_app(**UNLIMITED)
    with LiveServer(app) as server:
        record = requests.post(f"{server.url}/api/feedbacks", json=payload(), headers=WEB, timeout=30).json()
        url = f"{server.url}/api/feedbacks/{record['id']}/attachments"
        for n in range(7):
            assert (
                requests.post(
                    url, files={"file": (f"{n}.log", b"x")}, data={"kind": "log_file"}, headers=WEB, timeout=30
                ).status_code
                == 201
            )
        responses = run_together(
            6,
            lambda i: requests.post(
                url, files={"file": (f"p{i}.log", f"p{i}".encode())}, data={"kind": "log_file"}, headers=WEB, timeout=30
            ),
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] * 3 + [409] * 3, [r.text for r in responses]
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 409} == {"attachment_limit"}
    folder = app.config["REVIEW_UPLOADS_PATH"] + f"/feedback/{record['id']}"

    files = sorted(os.listdir(folder))
    with db.connection_context():
        stored = sorted(a.stored_name for a in FeedbackAttachment.select())
    assert len(stored) == 10 and files == stored  # no file without a row, no row without a file


def test_chunked_body_is_measured_while_reading(make_app):
    app = make_app(FEEDBACK_MAX_BODY_BYTES=1024, **UNLIMITED)

    def chunks(data):
        for start in range(0, len(data), 100):
            yield data[start : start + 100]

    small = json.dumps(payload()).encode()
    big = json.dumps(payload(content="x" * 3000)).encode()
    headers = {**WEB, "Content-Type": "application/json"}
    with LiveServer(app) as server:
        accepted = requests.post(f"{server.url}/api/feedbacks", data=chunks(small), headers=headers, timeout=30)
        refused = requests.post(f"{server.url}/api/feedbacks", data=chunks(big), headers=headers, timeout=30)
    assert accepted.request.headers.get("Transfer-Encoding") == "chunked"
    assert "Content-Length" not in accepted.request.headers
    assert accepted.status_code == 201, accepted.text
    assert refused.status_code == 413 and refused.json()["error"]["code"] == "payload_too_large"
