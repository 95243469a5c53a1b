"""Sign in and out with the admin session cookie (docs/api.md §3)."""

from urllib.parse import urlsplit

from flask import current_app, redirect, request, session
from flask_login import current_user, login_user, logout_user
from itsdangerous import BadSignature, URLSafeTimedSerializer

from blueprints.common import settings
from blueprints.guards import check_same_origin
from blueprints.openapi import Blueprint, request_body
from rules.limits import LOGIN_MAX_BYTES
from schemas.auth import LoginSchema
from services.auth import authenticate, new_unguessable_id

bp = Blueprint("auth", __name__)
DEVICE_COOKIE = "review_known_device"  # a signed [user name, device id]; its attempts are counted apart
DEVICE_DAYS = 90
SIGNED_IN = dict(
    description="To `next` (a local path) or /review with the session cookie and a known-device cookie "
    "(review_known_device, 90 days); on a failure to /login?error=invalid_credentials, or "
    "/login?error=too_many_attempts while sign-ins from that user name or address are throttled "
    "(LOGIN_MAX_FAILURES within LOGIN_FAILURE_WINDOW_SECONDS). An attempt carrying the user's "
    "known-device cookie is counted on its own, apart from the name and address",
    headers={"Location": "Location"},
)
SIGNED_OUT = dict(description="To /login, with the session cookie cleared", headers={"Location": "Location"})


def safe_next(target):
    """Only local paths: no scheme, no host, no protocol-relative or backslash tricks."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/review"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return "/review"
    return target


@bp.post("/api/auth/login")
# Any failure is a redirect, so the route reads the fields itself.
@bp.doc(
    requestBody=request_body(LoginSchema, "application/json", "application/x-www-form-urlencoded"),
    errors=(403, 413, 500),
)
@bp.answers(303, media=None, **SIGNED_IN)
def login():
    """Check the credentials; 303 to `next` (local paths only) with the session cookie, or back to /login.

    A sign-in from another origin is 403: a foreign page could otherwise sign a browser into an account
    of its choosing (login CSRF).
    """
    check_same_origin()
    request.max_content_length = LOGIN_MAX_BYTES  # 413 before more is read: nobody is signed in yet
    data = request.get_json(silent=True) if request.is_json else request.form
    data = data if isinstance(data, dict) else {}  # the form is a dict too; a JSON array or number is not
    username, password = str(data.get("username") or ""), str(data.get("password") or "")
    target = safe_next(str(data.get("next") or request.args.get("next") or ""))
    user, failure = authenticate(
        username,
        password,
        request.remote_addr,
        settings().login_max_failures,
        settings().login_failure_window_seconds,
        device=_known_device(username),
    )
    if user is None:  # `failure` says why
        return redirect(f"/login?error={failure}", 303)
    session.clear()
    session.permanent = True
    login_user(user)
    session["sid"] = new_unguessable_id()  # what logout ends on the server
    response = redirect(target, 303)
    _remember_device(response, user.username)
    return response


def _devices():
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=DEVICE_COOKIE)


def _known_device(username):
    """The device id of a valid known-device cookie issued for `username`, else None."""
    token = request.cookies.get(DEVICE_COOKIE)
    if not token:
        return None
    try:
        name, device = _devices().loads(token, max_age=DEVICE_DAYS * 86400)
    except (BadSignature, ValueError, TypeError):
        return None
    return device if name == username.strip() else None


def _remember_device(response, username):
    """After a sign-in: this browser is a known device of `username` for DEVICE_DAYS (docs/api.md §3)."""
    response.set_cookie(
        DEVICE_COOKIE,
        _devices().dumps([username, new_unguessable_id()]),
        max_age=DEVICE_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        path="/",
        secure=current_app.config["SESSION_COOKIE_SECURE"],
    )


@bp.route("/api/auth/logout", methods=["GET", "POST"])
@bp.doc(errors=(403, 500))
@bp.answers(303, media=None, **SIGNED_OUT)
def logout():
    """End the session (a copy of its cookie stops working too), clear the cookie and go back to /login.

    A POST from another origin is refused."""
    if current_user.is_authenticated:
        check_same_origin()  # no-op for GET, allowed from anywhere (docs/api.md §3)
        if session.get("sid"):
            current_app.extensions["ended_sessions"].end(
                session["sid"], current_app.permanent_session_lifetime.total_seconds()
            )
        logout_user()
    session.clear()
    return redirect("/login", 303)
