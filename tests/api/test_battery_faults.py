"""Reliability battery, faults (issue 9, item 2).

- A crash between the file write and the record write leaves neither an orphan file nor an orphan
  record: the record write fails (a SQLite trigger aborts it), or the process dies right there
  (the trigger calls a function that ends the process, in a child process); after a restart on the
  same folders every stored file has its row, every row its file, and no temporary file is left.
- Outbound timeouts: a platform that hangs, or trickles its answer a byte at a time, fails the
  publish job within the configured timeout (WECHAT_TIMEOUT_SECONDS), and the task can be
  published again afterwards.
"""

import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PIL import Image

from app import create_app
from fakeplatform import FakePlatform
from models import Asset, db
from models.feedback import FeedbackAttachment
from tests.helpers.app import AGENT_TOKEN, create_admin, login
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset
from tests.helpers.scripted import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
CLIENT = {"x-feedback-client-token": "client-web-token"}
AGENT = {"x-review-agent-token": AGENT_TOKEN}
CRASHED = 137


def _png(seed):
    out = io.BytesIO()
    Image.new("RGB", (12, 9), (seed % 256, 40, 90)).save(out, "PNG")
    return out.getvalue()


def _config(tmp_path):
    return {
        "TESTING": True,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "FEEDBACK_CLIENT_TOKENS": "web=client-web-token",
        "WEBHOOK_SENDER_ENABLED": False,
        "TEAM_MESSAGES_ENABLED": False,
        "CHAT_CARDS_ENABLED": False,
        "FEEDBACK_INDEXER_ENABLED": False,
        "WAL_CHECKPOINTER_ENABLED": False,
        "WECHAT_LIVE_WORKER_ENABLED": False,
        "WECHAT_EDITIONS_ENABLED": False,
        "WECHAT_STATS_ENABLED": False,
        "WECHAT_COMMENTS_ENABLED": False,
        "FEEDBACK_RATE_LIMIT_PER_IP": "",
        "FEEDBACK_RATE_LIMIT_PER_DEVICE": "",
    }


def _consistency(uploads):
    """(files without a row, rows without a file, temporary files) under uploads/."""
    uploads = Path(uploads)
    with db.connection_context():
        expected = {f"review/{a.stored_name}" for a in Asset.select() if a.stored_name and a.scope == "review"}
        expected |= {f"feedback/{a.feedback.feedback_id}/{a.stored_name}" for a in FeedbackAttachment.select()}
    present = {str(p.relative_to(uploads)) for p in uploads.rglob("*") if p.is_file()}
    temporary = sorted(p for p in present if Path(p).name.startswith("."))
    return sorted(present - expected - set(temporary)), sorted(expected - present), temporary


UPLOADS = {
    "asset": ("asset", "POST", "/api/assets/upload", AGENT, {"file": "image.png"}),
    "attachment": (
        "feedback_attachment",
        "POST",
        "/api/feedbacks/{feedback_id}/attachments",
        CLIENT,
        {"kind": "screenshot", "file": "shot.png"},
    ),
}


def _new_feedback(client):
    response = client.post(
        "/api/feedbacks",
        headers=CLIENT,
        json={
            "type": "bug",
            "title": "闪退",
            "content": f"打开首页后闪退 {time.time_ns()}",
            "appName": "carbon-fitness",
            "appVersion": "2.3.0",
            "platform": "ios",
        },
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["id"]


def _form(fields, data):
    return {k: (io.BytesIO(data), v) if k == "file" else v for k, v in fields.items()}


# ---- the record write fails --------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(UPLOADS))
def test_a_failed_record_write_leaves_no_file(make_app, kind):
    table, method, path, headers, fields = UPLOADS[kind]
    app = make_app(FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE="")
    client = app.test_client()
    feedback_id = _new_feedback(client)
    url = path.format(feedback_id=feedback_id)
    ok = client.open(url, method=method, headers=headers, data=_form(fields, _png(1)))
    assert ok.status_code == 201, ok.get_data(as_text=True)
    with db.connection_context():
        db.execute_sql(
            f"CREATE TRIGGER refuse_insert BEFORE INSERT ON {table} "
            "BEGIN SELECT RAISE(ABORT, 'injected record write failure'); END"
        )
    failed = client.open(url, method=method, headers=headers, data=_form(fields, _png(2)))
    assert failed.status_code == 500, failed.get_data(as_text=True)
    assert failed.get_json()["error"]["code"] in ("storage_unavailable", "internal_error")
    assert _consistency(app.config["REVIEW_UPLOADS_PATH"]) == ([], [], [])
    with db.connection_context():
        assert db.execute_sql(f"SELECT count(*) FROM {table}").fetchone()[0] == 1


# ---- the disk is full ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(UPLOADS))
def test_a_full_disk_is_storage_unavailable_and_leaves_nothing(make_app, kind, monkeypatch):
    import errno

    table, method, path, headers, fields = UPLOADS[kind]
    app = make_app(FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE="")
    client = app.test_client()
    feedback_id = _new_feedback(client)  # no attachment yet: its folder does not exist

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    failed = client.open(
        path.format(feedback_id=feedback_id), method=method, headers=headers, data=_form(fields, _png(3))
    )
    assert failed.status_code == 500 and failed.get_json()["error"]["code"] == "storage_unavailable"
    uploads = Path(app.config["REVIEW_UPLOADS_PATH"])
    assert _consistency(uploads) == ([], [], [])
    assert not (uploads / "feedback" / feedback_id).exists()
    with db.connection_context():
        assert db.execute_sql(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


# ---- the process dies between the two ----------------------------------------------------------
CHILD = textwrap.dedent("""
    import io, json, os, sys
    sys.path.insert(0, {root!r})
    from app import create_app
    from models import db

    config, table, method, url, headers, fields = json.loads(sys.argv[1])
    app = create_app(config, serve=True)
    db.obj.register_function(lambda: os._exit({crashed}), "crash_now", 0)
    db.obj.close_all()  # connections opened from now on know crash_now()
    with db.connection_context():
        db.execute_sql(f"CREATE TRIGGER crash_on_insert BEFORE INSERT ON {{table}} BEGIN SELECT crash_now(); END")
    data = bytes.fromhex(fields.pop("_data"))
    form = {{k: (io.BytesIO(data), v) if k == "file" else v for k, v in fields.items()}}
    response = app.test_client().open(url, method=method, headers=headers, data=form)
    print("the upload finished without crashing:", response.status_code, response.get_data(as_text=True))
    sys.exit(3)
""")


def _crash_child(config, table, method, url, headers, fields, data):
    argument = json.dumps([config, table, method, url, headers, {**fields, "_data": data.hex()}])
    script = CHILD.format(root=str(ROOT), crashed=CRASHED)
    return subprocess.run(
        [sys.executable, "-c", script, argument], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


@pytest.mark.parametrize("kind", ["asset", "attachment"])
def test_a_crash_between_file_and_record_leaves_no_orphan_after_a_restart(tmp_path, kind):
    table, method, path, headers, fields = UPLOADS[kind]
    config = _config(tmp_path)
    app = create_app(config, serve=True)
    feedback_id = _new_feedback(app.test_client())
    if not db.is_closed():
        db.close()
    db.obj.close_all()

    child = _crash_child(config, table, method, path.format(feedback_id=feedback_id), headers, fields, _png(3))
    assert child.returncode == CRASHED, (child.returncode, child.stdout[-2000:], child.stderr[-2000:])

    restarted = create_app(config, serve=True)  # the service starts again on the same folders
    with db.connection_context():
        db.execute_sql("DROP TRIGGER crash_on_insert")
        assert db.execute_sql(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    assert _consistency(restarted.config["REVIEW_UPLOADS_PATH"]) == ([], [], [])


# ---- outbound timeouts ---------------------------------------------------------------------------
ACCOUNT = ("wx-silicon-rise", "secret-silicon-rise-123")


@pytest.fixture
def platform():
    fake = FakePlatform(dict([ACCOUNT]))
    fake.start()
    yield fake
    fake.stop()


def _platform_app(make_app, base_url):
    app = make_app(
        WECHAT_API_BASE=base_url,
        WECHAT_SILICON_RISE_APPID=ACCOUNT[0],
        WECHAT_SILICON_RISE_SECRET=ACCOUNT[1],
        WECHAT_TIMEOUT_SECONDS=1,
    )
    create_admin()
    client = app.test_client()
    login(client)
    return app, client


def _approved(app, client):
    cover = make_asset(app, 900, 500)
    body = "# 芯片\n\n![图](" + make_asset(app, 300, 200)["url"] + ")\n\n正文"
    payload = article_payload([cover["url"]])
    payload["candidates"]["bodyOptions"][0]["content"] = body
    task = create_task(client, AGENT, payload)
    response = client.post(decision_url(task), json=approve_article(task, cover))
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def _publish(client, task):
    started = time.perf_counter()
    response = client.post(f"/api/review/tasks/{task['id']}/publish-jobs")
    return response, time.perf_counter() - started


@pytest.mark.parametrize(
    "call",
    ["/cgi-bin/stable_token", "/cgi-bin/material/add_material", "/cgi-bin/media/uploadimg", "/cgi-bin/draft/add"],
)
def test_a_hanging_platform_call_fails_the_job_within_the_timeout(make_app, platform, call):
    app, client = _platform_app(make_app, platform.base_url)
    task = _approved(app, client)
    platform.hang_next(call, 20)

    response, seconds = _publish(client, task)

    assert response.status_code == 200, response.get_data(as_text=True)
    failed = response.get_json()
    assert failed["status"] == "approved"
    assert failed["publishJobs"][-1]["status"] == "failed"
    assert "timed out after 1 s" in failed["publishJobs"][-1]["lastError"]
    assert seconds < 8, f"the publish took {seconds:.1f} s with a 1 s timeout"  # room for a loaded machine
    again, _ = _publish(client, failed)  # the claim was released: publishing works once the platform answers
    assert again.status_code == 200 and again.get_json()["status"] == "published", again.get_data(as_text=True)


class TricklingServer(ScriptedServer):
    """Answers its first request with a 200 whose body arrives one byte every 0.4 s (the token answer:
    about 15 s in all), and closes every later connection at once."""

    def __init__(self, body=b'{"access_token":"T","expires_in":7200}', content_type="application/json"):
        self.body, self.content_type = body, content_type
        self.answered = 0
        super().__init__(self._trickle)
        self.base_url = f"http://127.0.0.1:{self.port}"

    def _trickle(self, conn, stopping):
        self.answered += 1
        if self.answered > 1:
            return
        conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: " + self.content_type.encode() + b"\r\n"
            b"Content-Length: " + str(len(self.body)).encode() + b"\r\n\r\n"
        )
        for byte in self.body:
            if stopping.wait(0.4):
                break
            conn.sendall(bytes([byte]))


def test_a_trickling_platform_fails_the_job_within_the_timeout(make_app):
    trickling = TricklingServer()
    try:
        app, client = _platform_app(make_app, trickling.base_url)
        task = _approved(app, client)
        response, seconds = _publish(client, task)
    finally:
        trickling.stop()
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["publishJobs"][-1]["status"] == "failed"
    assert seconds < 8, f"the publish took {seconds:.1f} s with a 1 s timeout"  # room for a loaded machine


def test_a_trickling_image_host_is_cut_off_at_the_overall_limit():
    from services.images.fetch import FetchRefused, fetch_bytes

    host = TricklingServer(body=b"\x89PNG" + bytes(200), content_type="image/png")  # ~30 s at its pace
    started = time.monotonic()
    try:
        with pytest.raises(FetchRefused, match="took too long"):
            fetch_bytes(
                host.base_url + "/a.png",
                allowed_hosts=["127.0.0.1"],
                allow_private=True,
                timeout=(1, 1),
                total_seconds=1,
            )
    finally:
        host.stop()
    assert time.monotonic() - started < 3


def test_a_trickling_webhook_receiver_does_not_hold_the_sender():
    from types import SimpleNamespace

    from services.review.webhooks import _post

    receiver = TricklingServer(body=b'{"ok": true}' + b" " * 200)  # its body would take ~30 s
    started = time.monotonic()
    try:
        outcome = _post(receiver.base_url + "/hook", "secret", SimpleNamespace(message_id="m-1", payload={"a": 1}))
    finally:
        receiver.stop()
    assert outcome is None  # a 2xx status is the delivery; the body is not read
    assert time.monotonic() - started < 3
