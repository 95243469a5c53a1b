"""Admin sign-in, sessions, guards and tokens (docs/api.md §3)."""

import html
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import itsdangerous.timed
import pytest
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from marshmallow import Schema, fields

from blueprints.guards import admin_required, agent_or_admin, agent_required, client_required
from blueprints.openapi import Blueprint
from models import AdminUser, EndedSession, LoginAttempt, db
from rules.limits import LOGIN_MAX_BYTES
from services import auth
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, assert_error, built_app, create_admin, login
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


class NameSchema(Schema):
    name = fields.String(required=True)


@pytest.fixture
def guarded(make_app):
    """An app with probe routes behind each guard."""

    def factory(**overrides):
        application = make_app(**overrides)
        probe = Blueprint("probe", __name__)

        @probe.route("/api/probe/review", methods=["GET", "POST"])
        @admin_required("review")
        def review_probe():
            return {"ok": True}

        @probe.get("/api/probe/feedback")
        @admin_required("feedback")
        def feedback_probe():
            return {"ok": True}

        @probe.get("/probe/page")
        @admin_required("review")
        def page_probe():
            return "page"

        @probe.get("/api/probe/agent")
        @agent_required
        def agent_probe():
            return {"ok": True}

        @probe.post("/api/probe/agent-body")
        @probe.arguments(NameSchema)
        @agent_required
        def agent_body_probe(body):
            return body

        @probe.post("/api/probe/agent-body-guard-first")
        @agent_required
        @probe.arguments(NameSchema)
        def agent_body_guard_first(body):
            return body

        @probe.get("/api/probe/either")
        @agent_or_admin("review")
        def either_probe():
            from flask import g

            return {"actor": g.actor[0]}

        @probe.post("/api/probe/client")
        @client_required
        def client_probe():
            from flask import g

            return {"channel": g.feedback_channel}

        application.extensions["openapi"].register_blueprint(probe)
        return application

    return factory


def signed_in(guarded, **config):
    """The guarded app (with `config`) and a client signed in as its admin."""
    app = guarded(**config)
    create_admin()
    client = app.test_client()
    login(client)
    return app, client


def session_cookie_of(response):
    return next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("review_admin_session="))


def test_login_by_form_sets_cookie_with_flags(guarded):
    app = guarded()
    create_admin()
    client = app.test_client()
    response = client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.status_code == 303
    assert response.headers["Location"] == "/review"
    cookie = session_cookie_of(response)
    assert cookie.startswith("review_admin_session=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie
    assert client.get("/api/probe/review").get_json() == {"ok": True}


def test_login_by_json_with_next(guarded):
    app = guarded()
    create_admin()
    client = app.test_client()
    response = client.post(
        "/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD, "next": "/feedback?status=processing"}
    )
    assert response.status_code == 303
    assert response.headers["Location"] == "/feedback?status=processing"


def test_secure_flag_when_configured(guarded):
    app = guarded(SESSION_COOKIE_SECURE=True)
    create_admin()
    response = app.test_client().post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert all("Secure" in cookie for cookie in response.headers.getlist("Set-Cookie"))  # the device one too


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "http:/x",
        "javascript:alert(1)",
        "/ok\r\nSet-Cookie: x=1",
    ],
)
def test_next_open_redirect_refused(guarded, target):
    app = guarded()
    create_admin()
    response = app.test_client().post(
        "/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD, "next": target}
    )
    assert response.status_code == 303
    assert response.headers["Location"] == "/review"


def test_failed_login_redirects_without_cookie(guarded):
    app = guarded()
    create_admin()
    response = app.test_client().post("/api/auth/login", data={"username": "admin", "password": "wrong"})
    assert response.status_code == 303
    assert response.headers["Location"] == "/login?error=invalid_credentials"
    assert "Set-Cookie" not in response.headers


def fail_five(client, username="admin", **kwargs):
    """Five wrong passwords for `username`: the lockout's threshold."""
    for _ in range(5):
        client.post("/api/auth/login", data={"username": username, "password": "wrong"}, **kwargs)


def test_throttle_after_five_failures_per_username(guarded):
    app = guarded()
    create_admin()
    client = app.test_client()
    fail_five(client)
    # Even the right password is refused during the window.
    response = client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.headers["Location"] == "/login?error=too_many_attempts"
    assert "Set-Cookie" not in response.headers
    # When the window has passed, sign-in works again.
    with db.connection_context():
        LoginAttempt.update(at="2000-01-01T00:00:00.000Z").execute()
    assert login(client).headers["Location"] == "/review"


def test_failures_older_than_the_window_are_not_kept(guarded):
    """Every failed sign-in writes a row: those past the window count for nothing and are deleted, so
    an outsider's guesses over months do not grow the table without end."""
    app = guarded()
    client = app.test_client()
    fail_five(client, "stranger")
    with db.connection_context():
        LoginAttempt.update(at="2000-01-01T00:00:00.000Z").execute()
    client.post("/api/auth/login", data={"username": "another", "password": "wrong"})
    with db.connection_context():
        assert [(row.username, row.at > "2000-01-02") for row in LoginAttempt.select()] == [("another", True)]


def test_throttle_per_ip_across_usernames(guarded):
    app = guarded()
    create_admin()
    client = app.test_client()
    for n in range(5):
        client.post("/api/auth/login", data={"username": f"nobody{n}", "password": "x"})
    response = client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.headers["Location"] == "/login?error=too_many_attempts"
    other_ip = app.test_client().post(
        "/api/auth/login",
        data={"username": "admin", "password": ADMIN_PASSWORD},
        environ_base={"REMOTE_ADDR": "10.0.0.9"},
    )
    # The user name itself has no failures, so from another address it signs in.
    assert other_ip.headers["Location"] == "/review"


def _in_parallel(app, monkeypatch, passwords):
    """Sign in as admin from one address in threads that all pass their password check before any
    records its outcome: the interleaving of simultaneous requests. Returns the Locations."""
    barrier = threading.Barrier(len(passwords))
    real_check = auth.check_password_hash

    def check_then_wait(password_hash, password):
        result = real_check(password_hash, password)
        try:
            barrier.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass  # some attempt was refused before its check (the fault these tests look for)
        return result

    monkeypatch.setattr(auth, "check_password_hash", check_then_wait)

    def attempt(password):
        response = app.test_client().post("/api/auth/login", data={"username": "admin", "password": password})
        return response.headers["Location"]

    with ThreadPoolExecutor(len(passwords)) as pool:
        return list(pool.map(attempt, passwords))


def test_parallel_correct_logins_from_one_ip_are_all_accepted(guarded, monkeypatch):
    app = guarded()
    create_admin()
    assert _in_parallel(app, monkeypatch, [ADMIN_PASSWORD] * 8) == ["/review"] * 8
    with db.connection_context():
        assert LoginAttempt.select().count() == 0


def test_parallel_wrong_guesses_learn_at_most_five_answers(guarded, monkeypatch):
    app = guarded()
    create_admin()
    outcomes = Counter(_in_parallel(app, monkeypatch, [f"guess-{n}" for n in range(8)]))
    assert outcomes == {"/login?error=invalid_credentials": 5, "/login?error=too_many_attempts": 3}
    monkeypatch.undo()
    response = app.test_client().post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.headers["Location"] == "/login?error=too_many_attempts"


def test_cross_origin_logout_refused(guarded):
    app, client = signed_in(guarded)
    assert_error(client.post("/api/auth/logout", headers={"Origin": "http://evil.com"}), 403, "forbidden")
    assert client.get("/api/probe/review").status_code == 200  # still signed in
    # GET logout is allowed from anywhere (docs/api.md §3 offers it as a plain link).
    assert client.get("/api/auth/logout", headers={"Origin": "http://evil.com"}).status_code == 303
    assert_error(client.get("/api/probe/review"), 401, "unauthorized")


def test_a_sign_in_from_another_origin_is_refused(guarded):
    """Login CSRF: a foreign page must not sign a browser into an account of its choosing."""
    app = guarded()
    create_admin()
    client = app.test_client()
    form = {"username": "admin", "password": ADMIN_PASSWORD}
    for origin in ("http://evil.com", "null"):
        response = client.post("/api/auth/login", data=form, headers={"Origin": origin})
        assert_error(response, 403, "forbidden")
        assert "Set-Cookie" not in response.headers
    response = client.post("/api/auth/login", data=form, headers={"Origin": "http://localhost"})
    assert response.status_code == 303 and session_cookie_of(response).startswith("review_admin_session=")


@pytest.mark.parametrize(
    "path", ["/review?status=approved&publicAccount=silicon-rise", "/probe/page?q=a%2Bb+c&tag=%26x&empty="]
)
def test_next_survives_the_login_round_trip(guarded, path):
    app = guarded()
    create_admin()
    client = app.test_client()
    to_login = client.get(path).headers["Location"]
    form = client.get(to_login).get_data(as_text=True)
    sign_in_form = form[form.index('action="/api/auth/login"') :]  # the language switch carries a next of its own
    next_value = html.unescape(re.search(r'name="next" value="([^"]*)"', sign_in_form).group(1))
    response = client.post(
        "/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD, "next": next_value}
    )
    assert response.headers["Location"] == path
    assert client.get(path).status_code == 200


def test_next_survives_failed_sign_ins(guarded):
    """The failure redirect is exactly /login?error=… (docs/api.md §3); the form page keeps `next`."""
    app = guarded()
    create_admin()
    client = app.test_client()
    page = "http://localhost/login?next=%2Freview%3Fstatus%3Dall"
    for _attempt in range(2):
        failed = client.post(
            "/api/auth/login",
            data={"username": "admin", "password": "wrong", "next": "/review?status=all"},
            headers={"Referer": page},
        )
        assert failed.headers["Location"] == "/login?error=invalid_credentials"
        again = client.get(failed.headers["Location"], headers={"Referer": page})
        assert again.status_code == 303
        page = "http://localhost" + again.headers["Location"]
        form = client.get(again.headers["Location"]).get_data(as_text=True)
        assert 'name="next" value="/review?status=all"' in form and "Wrong user name or password" in form
    response = client.post(
        "/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD, "next": "/review?status=all"}
    )
    assert response.headers["Location"] == "/review?status=all"
    # Without a sign-in page as referrer there is nothing to keep.
    assert (
        client.get(
            "/login?error=invalid_credentials", headers={"Referer": "http://evil.example/login?next=/x"}
        ).status_code
        == 200
    )


def test_logout_get_and_post_clear_cookie(guarded):
    app = guarded()
    create_admin()
    for method in ("get", "post"):
        client = app.test_client()
        login(client)
        response = getattr(client, method)("/api/auth/logout")
        assert response.status_code == 303 and response.headers["Location"] == "/login"
        assert "review_admin_session=;" in response.headers["Set-Cookie"]
        assert_error(client.get("/api/probe/review"), 401, "unauthorized")


def test_logout_ends_the_session_on_the_server_too(guarded, monkeypatch):
    """A copy of the cookie (another browser, a leaked header) stops working at logout, in every
    process on the database and after a restart; the admin's other sessions go on."""
    from services.auth import EndedSessions

    app = guarded()
    create_admin()
    client, other = app.test_client(), app.test_client()
    login(client)
    login(other)
    stolen = client.get_cookie("review_admin_session").value

    def copy_of_cookie(application):
        copy = application.test_client()
        copy.set_cookie("review_admin_session", stolen, domain="localhost")
        return copy

    second = guarded()  # another process on the same database, which read the records before the logout
    assert copy_of_cookie(app).get("/api/probe/review").status_code == 200
    assert copy_of_cookie(second).get("/api/probe/review").status_code == 200

    assert client.post("/api/auth/logout", headers={"Origin": "http://localhost"}).status_code == 303
    copy = copy_of_cookie(app)
    refused = copy.get("/api/probe/review")
    assert_error(refused, 401, "unauthorized")
    assert copy.get_cookie("review_admin_session") is None  # deleted, not signed anew to live on
    assert other.get("/api/probe/review").status_code == 200
    monkeypatch.setattr(EndedSessions, "REFRESH_SECONDS", 0)  # the other process re-reads the records
    assert_error(copy_of_cookie(second).get("/api/probe/review"), 401, "unauthorized")

    with db.connection_context():
        EndedSession.create(sid="long-expired", expires_at="2020-01-01T00:00:00.000Z")
    restarted = guarded()
    assert_error(copy_of_cookie(restarted).get("/api/probe/review"), 401, "unauthorized")
    again = restarted.test_client()
    login(again)  # signing in again starts a new session
    assert again.get("/api/probe/review").status_code == 200
    with db.connection_context():  # records are kept only as long as their cookies could live
        assert EndedSession.select().count() == 1
        assert EndedSession.get_or_none(EndedSession.sid == "long-expired") is None


def test_401_403_and_redirect(guarded):
    app = guarded()
    client = app.test_client()
    assert_error(client.get("/api/probe/review"), 401, "unauthorized")
    page = client.get("/probe/page?x=1")
    assert page.status_code == 303 and page.headers["Location"] == "/login?next=/probe/page%3Fx%3D1"
    create_admin("reviewer", permissions="review")
    login(client, "reviewer")
    assert client.get("/api/probe/review").status_code == 200
    assert_error(client.get("/api/probe/feedback"), 403, "forbidden")


def test_deactivated_user_loses_session_at_once(guarded, runner):
    app, client = signed_in(guarded)
    assert client.get("/api/probe/review").status_code == 200
    result = app.test_cli_runner().invoke(args=["deactivate-admin", "admin"])
    assert result.exit_code == 0, result.output
    assert_error(client.get("/api/probe/review"), 401, "unauthorized")
    # And cannot sign in again.
    response = client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.headers["Location"] == "/login?error=invalid_credentials"


def test_password_change_ends_old_sessions(guarded):
    app, client = signed_in(guarded)
    create_admin(password="a whole new password")
    assert_error(client.get("/api/probe/review"), 401, "unauthorized")


@pytest.fixture
def clock(monkeypatch):
    """Moves on the clock the signed session cookie is dated and checked by, instead of sleeping:
    itsdangerous's TimestampSigner reads `time.time()` through its module `itsdangerous.timed`."""
    offset = [0.0]
    real = time.time
    monkeypatch.setattr(itsdangerous.timed, "time", SimpleNamespace(time=lambda: real() + offset[0]))

    def move_on(seconds):
        offset[0] += seconds

    return move_on


def test_session_idle_lifetime(guarded, clock):
    app, client = signed_in(guarded, PERMANENT_SESSION_LIFETIME=1)
    assert client.get("/api/probe/review").status_code == 200
    clock(2.1)  # past the signed cookie's own max age
    assert_error(client.get("/api/probe/review"), 401, "unauthorized")
    assert app.permanent_session_lifetime == timedelta(seconds=1)


def _session_cookie_set(response):
    return any(h.startswith("review_admin_session=") for h in response.headers.getlist("Set-Cookie"))


def test_session_lifetime_slides_with_use(guarded, clock):
    # Flask re-signs the cookie on every request: used within its lifetime, a session goes on past it.
    app = guarded(PERMANENT_SESSION_LIFETIME=3)
    create_admin()
    client = app.test_client()
    login(client)
    clock(2)
    refreshed = client.get("/api/probe/review")
    assert refreshed.status_code == 200 and _session_cookie_set(refreshed)
    clock(2)  # 4 s after sign-in, 2 s after the refreshed cookie was signed
    assert client.get("/api/probe/review").status_code == 200


def test_tampered_or_foreign_cookie_refused_after_the_real_one_was_seen(guarded):
    app, client = signed_in(guarded)
    assert client.get("/api/probe/review").status_code == 200
    value = client.get_cookie("review_admin_session").value
    tampered = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
    data = SecureCookieSessionInterface().get_signing_serializer(app).loads(value)
    other_app = Flask("other")
    other_app.secret_key = "a different secret"
    foreign = SecureCookieSessionInterface().get_signing_serializer(other_app).dumps(data)
    for bad in (tampered, value + "x", foreign):
        other = app.test_client()
        other.set_cookie("review_admin_session", bad)
        assert_error(other.get("/api/probe/review"), 401, "unauthorized")
    assert client.get("/api/probe/review").status_code == 200


def test_default_session_lifetime_is_twelve_hours(app):
    assert app.permanent_session_lifetime == timedelta(hours=12)


def test_cross_origin_write_refused(guarded):
    app, client = signed_in(guarded)
    assert_error(client.post("/api/probe/review", headers={"Origin": "https://evil.example"}), 403, "forbidden")
    assert_error(client.post("/api/probe/review", headers={"Origin": "null"}), 403, "forbidden")
    assert client.post("/api/probe/review", headers={"Origin": "http://localhost"}).status_code == 200
    assert client.post("/api/probe/review").status_code == 200
    # Reads are not state changes.
    assert client.get("/api/probe/review", headers={"Origin": "https://evil.example"}).status_code == 200


def test_agent_token_rotation_list(guarded):
    app = guarded(REVIEW_AGENT_TOKEN="old-token-aaaaaaaa, new-token-bbbbbbbb")
    client = app.test_client()
    for token in ("old-token-aaaaaaaa", "new-token-bbbbbbbb"):
        assert client.get("/api/probe/agent", headers={"x-review-agent-token": token}).status_code == 200
    for bad in ("old-token-aaaaaaa", "", "new-token-bbbbbbbb,old-token-aaaaaaaa", AGENT_TOKEN):
        assert_error(client.get("/api/probe/agent", headers={"x-review-agent-token": bad}), 401, "unauthorized")
    assert_error(client.get("/api/probe/agent"), 401, "unauthorized")


def test_unset_agent_token_refuses_everyone(guarded):
    app = guarded(REVIEW_AGENT_TOKEN="")
    assert_error(app.test_client().get("/api/probe/agent", headers={"x-review-agent-token": ""}), 401, "unauthorized")


def test_agent_token_compared_in_constant_time():
    # The comparison goes through hmac.compare_digest over every configured token.
    calls = []
    import hmac as hmac_module

    original = hmac_module.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return original(a, b)

    auth.hmac.compare_digest = spy
    try:
        assert auth.token_matches("b", ["a", "b", "c"])
        assert not auth.token_matches("z", ["a", "b"])
    finally:
        auth.hmac.compare_digest = original
    assert len(calls) == 5  # no early exit on the first match


def test_either_credential(guarded):
    app = guarded()
    client = app.test_client()
    assert client.get("/api/probe/either", headers={"x-review-agent-token": AGENT_TOKEN}).get_json() == {
        "actor": "agent"
    }
    assert_error(client.get("/api/probe/either"), 401, "unauthorized")
    create_admin()
    login(client)
    assert client.get("/api/probe/either").get_json() == {"actor": "admin"}


def test_client_token_names_channel(guarded):
    app = guarded()
    client = app.test_client()
    response = client.post("/api/probe/client", headers={"x-feedback-client-token": "client-mini-token"})
    assert response.get_json() == {"channel": "miniprogram"}
    assert_error(client.post("/api/probe/client", headers={"x-feedback-client-token": "nope"}), 401, "unauthorized")
    assert_error(client.post("/api/probe/client"), 401, "unauthorized")


def test_create_admin_cli_password_stdin(app, runner):
    result = runner.invoke(
        args=["create-admin", "editor", "--permissions", "feedback", "--password-stdin"], input="s3cret-password\n"
    )
    assert result.exit_code == 0, result.output
    assert "s3cret-password" not in result.output
    with db.connection_context():
        user = AdminUser.get(AdminUser.username == "editor")
        assert user.permissions == "feedback"
        assert user.password_hash.startswith("pbkdf2:sha256:1$")  # PASSWORD_HASH_METHOD of the tests
    client = app.test_client()
    login(client, "editor", "s3cret-password")
    bad = runner.invoke(args=["create-admin", "x", "--permissions", "root", "--password-stdin"], input="longenough\n")
    assert bad.exit_code != 0 and "permissions" in bad.output


def test_create_admin_keeps_an_accounts_permissions_and_says_where_it_wrote(app, runner, store):
    """A password reset for scripts used to grant both permissions to a review-only account."""

    def create(*args, password="s3cret-password"):
        result = runner.invoke(args=["create-admin", *args, "--password-stdin"], input=password + "\n")
        assert result.exit_code == 0, result.output
        return result.output

    assert "admin reader saved with permissions review in " in create("reader", "--permissions", "review")
    output = create("reader", password="an0ther-password")
    where = f"{app.instance_path}/review.db" if store == "sqlite" else "the DATABASE_URL database"
    assert f"admin reader saved with permissions review in {where}" in output
    assert "with permissions feedback,review" in create("newcomer")  # a new account: both
    runner.invoke(args=["deactivate-admin", "reader"])
    create("reader", password="th1rd-password")  # on again, as the README says
    with db.connection_context():
        user = AdminUser.get(AdminUser.username == "reader")
        assert (user.permissions, user.active) == ("review", True)


def test_bootstrap_admin_from_settings(make_app):
    app = make_app(REVIEW_ADMIN_USERNAME="boot", REVIEW_ADMIN_PASSWORD="bootstrap-password")
    client = app.test_client()
    login(client, "boot", "bootstrap-password")
    with db.connection_context():
        assert AdminUser.get(AdminUser.username == "boot").permissions == "feedback,review"


def test_bootstrap_admin_keeps_its_sessions_across_restarts(make_app):
    """The settings are read at every start; only a change of them signs the admin out."""
    settings = {"REVIEW_ADMIN_USERNAME": "boot", "REVIEW_ADMIN_PASSWORD": "bootstrap-password"}
    client = make_app(**settings).test_client()
    login(client, "boot", "bootstrap-password")
    cookie = client.get_cookie("review_admin_session").value

    def listing_after_restart(**changed):
        restarted = make_app(**{**settings, **changed}).test_client()
        restarted.set_cookie("review_admin_session", cookie, domain="localhost")
        return restarted.get("/api/review/tasks")

    assert listing_after_restart().status_code == 200
    assert listing_after_restart().status_code == 200
    assert_error(listing_after_restart(REVIEW_ADMIN_PASSWORD="a-new-password"), 401, "unauthorized")
    login(make_app(**{**settings, "REVIEW_ADMIN_PASSWORD": "a-new-password"}).test_client(), "boot", "a-new-password")


def test_a_deactivated_bootstrap_admin_stays_deactivated(make_app, tmp_path, caplog):
    settings = {"REVIEW_ADMIN_USERNAME": "boot", "REVIEW_ADMIN_PASSWORD": "bootstrap-password"}
    make_app(**settings)
    with db.connection_context():
        assert auth.set_active("boot", False)
        nonce = AdminUser.get(AdminUser.username == "boot").session_nonce
    # A restart, and a CLI command (it used to save the admin from the settings as well).
    with caplog.at_level(logging.WARNING):
        make_app(**settings)
    assert any("boot from settings is deactivated" in r.getMessage() for r in caplog.records)
    env = {
        **os.environ,
        **settings,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "routes"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    with db.connection_context():
        user = AdminUser.get(AdminUser.username == "boot")
        assert (user.active, user.session_nonce) == (False, nonce)
    refused = (
        make_app(**settings)
        .test_client()
        .post("/api/auth/login", data={"username": "boot", "password": "bootstrap-password"})
    )
    assert refused.headers["Location"] == "/login?error=invalid_credentials"


@pytest.mark.parametrize("path", ["/api/probe/agent-body", "/api/probe/agent-body-guard-first"])
def test_credentials_are_checked_before_input(guarded, path):
    app = guarded()
    client = app.test_client()
    assert_error(client.post(path, json={"wrong": 1}), 401, "unauthorized")
    headers = {"x-review-agent-token": AGENT_TOKEN}
    assert_error(client.post(path, json={"wrong": 1}, headers=headers), 400, "validation_error")
    assert client.post(path, json={"name": "x"}, headers=headers).get_json() == {"name": "x"}
    document = client.get("/api/openapi.json").get_json()
    operation = document["paths"][path]["post"]
    assert operation["security"] == [{"agentToken": []}]
    assert "requestBody" in operation


def test_the_lockout_message_names_the_configured_window(make_app):
    for window, wait in ((None, "Wait 15 minutes"), (60, "Wait 1 minute"), (1800, "Wait 30 minutes")):
        app = make_app(**({"LOGIN_FAILURE_WINDOW_SECONDS": window} if window else {}))
        page = app.test_client().get("/login?error=too_many_attempts").get_data(as_text=True)
        assert f"Too many failed attempts. {wait} and try again." in page


def test_a_logout_during_a_reread_of_the_records_is_not_lost(guarded, monkeypatch):
    """The periodic re-read assigned what it had read before the logout: the copy worked for 5 s more."""
    import services.auth as auth_module

    app = guarded()
    create_admin()
    client = app.test_client()
    login(client)
    stolen = client.get_cookie("review_admin_session").value
    ended, select = app.extensions["ended_sessions"], auth_module.EndedSession.select
    reading = threading.Event()

    class SlowQuery:
        def __init__(self, query):
            self.query = query

        def where(self, *conditions):
            rows = list(self.query.where(*conditions))  # read before the logout commits ...
            reading.set()
            wait_until(lambda: select().exists(), 10, "the logout recorded nothing")  # ... assigned after it
            # The room a logout not held back would have to add its id in memory too: a proof of absence.
            time.sleep(0.3)
            return rows

    monkeypatch.setattr(auth_module.EndedSession, "select", lambda *a: SlowQuery(select(*a)))

    def reread():
        with db.connection_context():
            ended.reload()

    thread = threading.Thread(target=reread)
    thread.start()
    assert reading.wait(5)
    monkeypatch.setattr(auth_module.EndedSession, "select", select)
    assert client.post("/api/auth/logout", headers={"Origin": "http://localhost"}).status_code == 303
    thread.join(10)
    copy = app.test_client()
    copy.set_cookie("review_admin_session", stolen, domain="localhost")
    assert_error(copy.get("/api/probe/review"), 401, "unauthorized")


def test_a_stranger_cannot_lock_an_admin_out_of_a_known_device(guarded):
    """Five wrong passwords for an admin's name, from anywhere, locked them out for 15 minutes (docs/api.md §3:
    a sign-in carrying the user's known-device cookie is not held back by the name or address lockout)."""
    app = guarded()
    create_admin()
    create_admin("bob")
    admin = app.test_client()
    signed_in = login(admin)
    cookie = next(c for c in signed_in.headers.getlist("Set-Cookie") if c.startswith("review_known_device="))
    assert "HttpOnly" in cookie and f"Max-Age={90 * 86400}" in cookie and "SameSite=Lax" in cookie
    admin.post("/api/auth/logout")
    stranger = app.test_client()
    fail_five(stranger)  # from the admin's own address too: the address lockout is beaten as well
    refused = stranger.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert refused.headers["Location"] == "/login?error=too_many_attempts"
    assert login(admin).headers["Location"] == "/review"  # the known device signs in
    admin.post("/api/auth/logout")
    # The cookie names its user: it does not lift the lockout of another name.
    fail_five(stranger, "bob", environ_base={"REMOTE_ADDR": "10.0.0.7"})
    other = admin.post("/api/auth/login", data={"username": "bob", "password": ADMIN_PASSWORD})
    assert other.headers["Location"] == "/login?error=too_many_attempts"
    # Its own failures are counted apart: five, then it waits like anyone.
    fail_five(admin)
    held = admin.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert held.headers["Location"] == "/login?error=too_many_attempts"


def test_a_forged_or_foreign_device_cookie_lifts_nothing(guarded):
    app = guarded()
    create_admin()
    stranger = app.test_client()
    fail_five(stranger)
    for value in ("forged", '["admin", "device"]'):
        stranger.set_cookie("review_known_device", value)
        refused = stranger.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
        assert refused.headers["Location"] == "/login?error=too_many_attempts"


def test_passwords_are_hashed_with_scrypt_unless_the_setting_says_otherwise(make_app):
    """PASSWORD_HASH_METHOD's default is scrypt (the tests' cheap method is a setting, not a code path)."""
    with built_app(make_app, PASSWORD_HASH_METHOD="scrypt"):
        assert create_admin("scrypted").password_hash.startswith("scrypt:")
    from services.settings import DEFAULTS

    assert DEFAULTS["PASSWORD_HASH_METHOD"] == "scrypt"


@pytest.mark.parametrize("form", [True, False])
def test_a_sign_in_larger_than_a_sign_in_is_refused_before_it_is_read(guarded, form):
    """A sign-in is read before anyone is known: the old route took 32 MiB of form or JSON from anybody."""
    app = guarded()
    create_admin()
    client = app.test_client()
    fields = {"username": "admin", "password": ADMIN_PASSWORD, "next": "/review?" + "x" * LOGIN_MAX_BYTES}
    response = client.post("/api/auth/login", **({"data": fields} if form else {"json": fields}))
    assert response.status_code == 413, response.status_code
    error = response.get_json()["error"]
    assert error["code"] == "payload_too_large" and str(LOGIN_MAX_BYTES) in error["message"], error
    assert not [c for c in response.headers.getlist("Set-Cookie") if c.startswith("review_admin_session=")]
    fields["next"] = "/review"  # the same sign-in of an ordinary size passes
    assert client.post("/api/auth/login", **({"data": fields} if form else {"json": fields})).status_code == 303
