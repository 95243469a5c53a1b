"""App factory, settings, state folders, schema upgrade, error model, OpenAPI, health, logs."""

import logging
import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from marshmallow import Schema, fields, validate

from app import create_app
from blueprints.openapi import Blueprint
from models import AdminUser, db
from models.schema import LATEST, current_version
from services.errors import Conflict, PreconditionFailed, RateLimited
from tests.helpers.app import assert_error
from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until


def test_state_folders_and_secret_key_reused(make_app, tmp_path):
    first = make_app()
    instance, uploads = tmp_path / "instance", tmp_path / "uploads"
    assert (instance / "review.db").exists()
    assert sorted(p.name for p in uploads.iterdir()) == ["feedback", "library", "review"]
    key_file = instance / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    second = make_app()
    assert first.config["SECRET_KEY"] == second.config["SECRET_KEY"] == key_file.read_text().strip()
    assert len(first.config["SECRET_KEY"]) >= 32


def test_a_start_that_cannot_write_the_secret_key_leaves_none(make_app, tmp_path, monkeypatch):
    """A full disk at the first start left an empty secret_key, and every later sign-in failed."""
    import errno

    import app as app_module

    opened = app_module.os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, _text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(app_module.os, "fdopen", lambda *args, **kwargs: Full(opened(*args, **kwargs)))
    with pytest.raises(OSError):
        make_app()
    instance = tmp_path / "instance"
    assert not (instance / "secret_key").exists() and not list(instance.glob(".secret_key.*"))
    monkeypatch.undo()

    (instance / "secret_key").write_text("")  # as that older start left it
    application = make_app()
    assert len(application.config["SECRET_KEY"]) >= 32
    assert (instance / "secret_key").read_text().strip() == application.config["SECRET_KEY"]


def test_sqlite_pragmas(app):
    with db.connection_context():
        assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute_sql("PRAGMA synchronous").fetchone()[0] == 1  # normal
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_schema_upgrade_keeps_rows(tmp_path):
    """A database written by version 1 (no last_login_at, no version table of today) is upgraded in place."""
    instance = tmp_path / "instance"
    instance.mkdir()
    con = sqlite3.connect(instance / "review.db")
    con.executescript("""
        CREATE TABLE admin_user (id INTEGER PRIMARY KEY, username VARCHAR(64) NOT NULL UNIQUE,
            password_hash VARCHAR(255) NOT NULL, permissions VARCHAR(64) NOT NULL, active INTEGER NOT NULL,
            session_nonce VARCHAR(32) NOT NULL, created_at VARCHAR(32) NOT NULL);
        CREATE TABLE schema_version (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);
        INSERT INTO schema_version (version) VALUES (1);
        INSERT INTO admin_user VALUES (1, 'old-admin', 'scrypt:x', 'review', 1, 'abc', '2026-01-01T00:00:00.000Z');
    """)
    con.commit()
    con.close()
    create_app({"REVIEW_INSTANCE_PATH": str(instance), "REVIEW_UPLOADS_PATH": str(tmp_path / "u")}, serve=True)
    with db.connection_context():
        assert current_version() == LATEST
        columns = {c.name for c in db.get_columns("admin_user")}
        assert "last_login_at" in columns
        user = AdminUser.get(AdminUser.username == "old-admin")
        assert user.permissions == "review" and user.last_login_at is None
        assert db.table_exists("login_attempt")  # tables added since are created
    # Starting again changes nothing and loses nothing.
    create_app({"REVIEW_INSTANCE_PATH": str(instance), "REVIEW_UPLOADS_PATH": str(tmp_path / "u")}, serve=True)
    with db.connection_context():
        assert AdminUser.select().count() == 1


class ProbeSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(max=5))
    items = fields.List(fields.Nested(lambda: ItemSchema()), load_default=list)


class ItemSchema(Schema):
    label = fields.String(required=True)


@pytest.fixture
def probe_app(make_app):
    app = make_app(MAX_CONTENT_LENGTH=1024)
    bp = Blueprint("errprobe", __name__)

    @bp.post("/api/errprobe")
    @bp.arguments(ProbeSchema)
    @bp.answers(201, ProbeSchema)
    def errprobe(body):
        """Echo a validated body."""
        return body, 201

    @bp.get("/api/errprobe/<kind>")
    def raiser(kind):
        if kind == "conflict":
            raise Conflict("task is approved", code="invalid_state")
        if kind == "precondition":
            raise PreconditionFailed("version mismatch")
        if kind == "ratelimit":
            raise RateLimited("slow down", retry_after=7.4)
        if kind == "storage":
            import peewee

            raise peewee.OperationalError("unable to open database file SELECT secret FROM t")
        raise RuntimeError("boom with password=hunter2")

    app.extensions["openapi"].register_blueprint(bp)
    return app


def test_validation_error_dotted_paths(probe_app):
    client = probe_app.test_client()
    error = assert_error(
        client.post("/api/errprobe", json={"name": "toolong", "items": [{}], "extra": 1}), 400, "validation_error"
    )
    assert set(error["details"]) == {"name", "items.0.label", "extra"}
    assert client.post("/api/errprobe", json={"name": "ok"}).status_code == 201
    assert_error(
        client.post("/api/errprobe", data="not json", content_type="application/json"), 400, "validation_error"
    )
    assert_error(client.post("/api/errprobe", json=[1, 2]), 400, "validation_error")


def test_http_errors_in_contract_shape(probe_app):
    client = probe_app.test_client()
    assert_error(client.get("/api/does-not-exist"), 404, "not_found")
    response = client.delete("/api/errprobe")
    assert_error(response, 405, "method_not_allowed")
    assert "POST" in response.headers["Allow"]
    assert_error(
        client.post("/api/errprobe", data="x" * 4096, content_type="application/json"), 413, "payload_too_large"
    )
    assert_error(client.get("/api/errprobe/conflict"), 409, "invalid_state")
    assert_error(client.get("/api/errprobe/precondition"), 412, "precondition_failed")
    response = client.get("/api/errprobe/ratelimit")
    assert_error(response, 429, "rate_limited")
    assert response.headers["Retry-After"] == "7"


def test_internal_errors_reveal_nothing(probe_app, caplog):
    client = probe_app.test_client()
    with caplog.at_level(logging.INFO):
        storage = client.get("/api/errprobe/storage")
        crash = client.get("/api/errprobe/crash")
    assert_error(storage, 500, "storage_unavailable")
    error = assert_error(crash, 500, "internal_error")
    assert error["details"]["requestId"] == crash.headers["X-Request-Id"]
    for response in (storage, crash):
        text = response.get_data(as_text=True)
        assert "hunter2" not in text and "SELECT" not in text and "Traceback" not in text
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "hunter2" not in logged and "SELECT secret" not in logged
    assert crash.headers["X-Request-Id"] in logged


def test_html_pages_get_html_errors(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "404" in response.get_data(as_text=True)


def test_healthz(app, tmp_path):
    client = app.test_client()
    assert client.get("/healthz").get_json() == {"status": "ok"}
    db_file = tmp_path / "instance" / "review.db"
    moved = tmp_path / "moved.db"
    os.replace(db_file, moved)
    os.mkdir(db_file)  # a directory where the database file was: it can no longer be opened
    try:
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.get_json() == {"status": "unavailable"}
    finally:
        os.rmdir(db_file)
        os.replace(moved, db_file)


def test_request_log_line_and_request_id(client, caplog):
    with caplog.at_level(logging.INFO, logger="review.access"):
        response = client.get("/healthz?token=secret-value")
    request_id = response.headers["X-Request-Id"]
    lines = [r.getMessage() for r in caplog.records if r.name == "review.access"]
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("GET /healthz 200 ") and f"request_id={request_id}" in line and "ms" in line
    assert "secret-value" not in line


def test_openapi_document_is_valid(probe_app):
    from openapi_spec_validator import validate as validate_spec

    document = probe_app.test_client().get("/api/openapi.json").get_json()
    validate_spec(document)
    operation = document["paths"]["/api/errprobe"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Probe"}
    assert {"201", "400", "401", "409", "413", "429"} <= set(operation["responses"])
    assert set(document["components"]["securitySchemes"]) == {"adminSession", "agentToken", "clientToken"}
    assert probe_app.test_client().get("/api/docs").status_code == 200


def test_secret_settings_not_logged_at_start(make_app, caplog):
    with caplog.at_level(logging.DEBUG):
        make_app(REVIEW_AGENT_TOKEN="very-secret-agent-token", WECHAT_SILICON_RISE_SECRET="wx-secret-value")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "very-secret-agent-token" not in logged and "wx-secret-value" not in logged


def test_missing_agent_token_warns(make_app, caplog):
    with caplog.at_level(logging.WARNING):
        make_app(REVIEW_AGENT_TOKEN="")
    assert any("REVIEW_AGENT_TOKEN is not set" in r.getMessage() for r in caplog.records)


def test_cli_commands_do_not_warn_about_the_agent_token(tmp_path):
    env = {
        **os.environ,
        "REVIEW_AGENT_TOKEN": "",
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
    }
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "deactivate-admin", "nobody"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "nobody" in done.stdout + done.stderr  # the command ran against the new instance
    assert "REVIEW_AGENT_TOKEN" not in done.stdout + done.stderr


def _served_stderr(tmp_path, command, **settings):
    """Run a server command on a free port until /healthz answers 200, stop it; its stderr."""
    import signal

    port = free_port()
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        **settings,
    }
    env.pop("WERKZEUG_RUN_MAIN", None)
    server = subprocess.Popen(
        [sys.executable, "-m", *[part.format(port=port) for part in command]],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until(lambda: answers_ok(f"http://127.0.0.1:{port}/healthz"), 60, "the server did not start", every=0.2)
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the reloader's child too
        _, stderr = server.communicate(timeout=30)
    return stderr


def test_only_a_serving_start_settles_what_a_crash_left(tmp_path):
    """create_app(serve=True) says it will serve: it sweeps a dead process's half-placed upload. A
    one-off `flask --app app …` command beside the service builds the app without and leaves it."""
    from models.files import PendingFile

    folders = {"REVIEW_INSTANCE_PATH": str(tmp_path / "instance"), "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads")}
    create_app(folders)  # the folders and the database
    placed = tmp_path / "uploads" / "review" / "half-placed.png"
    placed.write_bytes(b"partial")
    with db.connection_context():
        PendingFile.create(path="review/half-placed.png", pid=2**22 + 7, created_at="2026-01-01T00:00:00.000Z")
    env = {**os.environ, **folders}
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "deactivate-admin", "nobody"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "nobody" in done.stdout + done.stderr and placed.exists()
    create_app(folders)
    assert placed.exists()
    create_app(folders, serve=True)
    assert not placed.exists()


def test_waitress_serve_writes_the_access_log(tmp_path):
    """`waitress-serve --call app:serving_app` configures no logging itself: the app does."""
    stderr = _served_stderr(
        tmp_path, ["waitress", "--listen=127.0.0.1:{port}", "--call", "app:serving_app"], REVIEW_AGENT_TOKEN="t"
    )
    assert re.search(r"INFO review\.access GET /healthz 200 [0-9.]+ms request_id=[0-9a-f]{16}", stderr), stderr


def _indexes():
    with db.connection_context():
        return sorted(db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"))


def test_an_upgraded_database_has_the_same_indexes_as_a_new_one(make_app):
    make_app()
    fresh = _indexes()
    with db.connection_context():  # as schema 3 left it: two review_task indexes no query uses
        db.execute_sql('CREATE INDEX review_task_status ON review_task ("status")')
        db.execute_sql('CREATE INDEX review_task_content_type ON review_task ("content_type")')
        db.execute_sql("UPDATE schema_version SET version = 3")
    assert len(_indexes()) == len(fresh) + 2
    make_app()  # restart: the upgrade runs
    assert _indexes() == fresh
    with db.connection_context():
        assert current_version() == LATEST


def test_ids_are_url_safe_and_start_with_a_letter_or_digit(monkeypatch):
    """A leading "-" would read as an option on a command line and as a formula in the CSV export."""
    import secrets

    from rules.ids import new_id

    draws = iter(["-leading-dash-000000000", "_leading_underscore_000", "Abc-def_ghi-jkl_mno-pqr"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: next(draws))
    assert new_id() == "Abc-def_ghi-jkl_mno-pqr"  # the first two draws were redrawn
    monkeypatch.undo()
    ids = {new_id() for _ in range(2000)}
    assert len(ids) == 2000 and all(i[0].isalnum() and re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids)


def test_state_files_are_private(tmp_path):
    """review.db held 0644 (password hashes, platform tokens): docs/api.md §11 asks 0600 files, 0700 folders."""
    import stat

    instance, uploads = tmp_path / "instance", tmp_path / "uploads"
    instance.mkdir()
    (instance / "config.py").write_text("THREADS = 4\n")
    app = create_app(
        {
            "REVIEW_INSTANCE_PATH": str(instance),
            "REVIEW_UPLOADS_PATH": str(uploads),
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "FEEDBACK_INDEXER_ENABLED": False,
            "WAL_CHECKPOINTER_ENABLED": False,
        },
        serve=True,
    )
    assert app.test_client().get("/healthz").status_code == 200
    with db.connection_context():
        db.execute_sql("CREATE TABLE IF NOT EXISTS probe (x)")  # a write: the WAL exists now
    for path in (
        instance / "review.db",
        instance / "review.db-wal",
        instance / "review.db-shm",
        instance / "secret_key",
        instance / "config.py",
    ):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in (instance, uploads, uploads / "review", uploads / "library", uploads / "feedback"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
