"""The one place that decides who may call a route (docs/api.md §3)."""

from functools import wraps
from urllib.parse import quote

from flask import g, redirect, request
from flask_login import current_user

from blueprints.common import settings
from rules.client_input import url_parts
from services.auth import channel_for_client_token, token_matches
from services.errors import Forbidden, Unauthorized, ValidationFailed

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
EITHER_CREDENTIAL = (
    "send a valid x-review-agent-token header, or sign in as an administrator (cookie review_admin_session)"
)


MACHINE_PATHS = ("/healthz", "/metrics")  # answered in JSON like the API, never as a page


def is_api_request():
    return request.path.startswith(("/api/", "/uploads/")) or request.path in MACHINE_PATHS


def check_same_origin():
    """Cookie-authenticated writes from another origin are refused (CSRF)."""
    origin = request.headers.get("Origin")
    if request.method not in STATE_CHANGING or not origin:
        return
    parts = url_parts(origin)
    if parts is None or origin == "null" or f"{parts.scheme}://{parts.netloc}" != request.host_url.rstrip("/"):
        raise Forbidden("cross-origin requests may not change state with the admin session")


def current_admin(permission, missing="sign in as an administrator first (cookie review_admin_session)"):
    """The signed-in admin holding `permission`, or raise 401 (`missing`)/403. Also refuses cross-origin writes."""
    user = current_user._get_current_object()  # one lookup instead of one per attribute
    if not user.is_authenticated:
        raise Unauthorized(missing)
    if permission and not user.has_permission(permission):
        raise Forbidden(f"your account lacks the '{permission}' permission")
    check_same_origin()
    return user


NUL_WORDS = "must not contain NUL (\\u0000)"


def refuse_nul_in_url():
    """After the credentials: a path or query parameter holding a NUL names and matches nothing here, and
    PostgreSQL cannot even compare text with one (a 500): 400, naming it."""
    if any(isinstance(name, str) and "\x00" in name for name in (request.view_args or {}).values()):
        raise ValidationFailed("the URL holds a NUL (%00), which names nothing here", {"url": ["NUL"]})
    nul = {key: [NUL_WORDS] for key, value in request.args.items(multi=True) if "\x00" in key + value}
    if nul:
        raise ValidationFailed("a query parameter holds a NUL (%00), which matches nothing here", nul)


def agent_token_valid():
    return token_matches(request.headers.get("x-review-agent-token"), settings().agent_tokens)


def _document(view, scheme, guard):
    """Record the security scheme for OpenAPI, and the guard so @bp.arguments can stay beneath it."""
    view._auth = [*view.__dict__.get("_auth", []), scheme]
    view._guard = guard


def admin_required(permission=None):
    """Admin session with a permission; HTML pages redirect to /login when signed out."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if not current_user.is_authenticated and not is_api_request():
                # Only "/" stays literal: "&", "=", "+" or "%" left bare would end or alter `next`.
                return redirect("/login?next=" + quote(request.full_path.rstrip("?"), safe="/"), 303)
            g.actor = ("admin", current_admin(permission).username)
            refuse_nul_in_url()
            return view(*args, **kwargs)

        _document(wrapper, "adminSession", decorator)
        return wrapper

    return decorator


def agent_required(view):
    """Header x-review-agent-token must equal one of REVIEW_AGENT_TOKEN (comma-separated)."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        if not agent_token_valid():
            raise Unauthorized("a valid x-review-agent-token header is required")
        g.actor = ("agent", None)
        refuse_nul_in_url()
        return view(*args, **kwargs)

    _document(wrapper, "agentToken", agent_required)
    return wrapper


def agent_or_admin(permission="review"):
    """Either credential; g.actor tells which one was used."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if agent_token_valid():
                g.actor = ("agent", None)
            else:
                g.actor = ("admin", current_admin(permission, EITHER_CREDENTIAL).username)
            refuse_nul_in_url()
            return view(*args, **kwargs)

        _document(wrapper, "agentToken", decorator)
        _document(wrapper, "adminSession", decorator)
        return wrapper

    return decorator


def client_required(view):
    """x-feedback-client-token names the client channel (FEEDBACK_CLIENT_TOKENS)."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        channel = channel_for_client_token(
            request.headers.get("x-feedback-client-token"), settings().feedback_client_tokens
        )
        if channel is None:
            raise Unauthorized("a valid x-feedback-client-token header is required")
        g.feedback_channel = channel
        refuse_nul_in_url()
        return view(*args, **kwargs)

    _document(wrapper, "clientToken", client_required)
    return wrapper
