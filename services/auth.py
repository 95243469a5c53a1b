"""Admin accounts, password checks with throttling, and token checks (docs/api.md §3)."""

import hmac
import logging
import re
import secrets
import threading
import time
from datetime import timedelta
from typing import Any

from werkzeug.security import check_password_hash, generate_password_hash

from models import AdminUser, EndedSession, LoginAttempt, immediate
from rules.ids import iso, now_iso, utcnow
from services.errors import ValidationFailed

log = logging.getLogger(__name__)

PERMISSIONS = ("review", "feedback")
DEVICE_KEY = "device:"  # LoginAttempt rows of a known device use this key for both name and address
USERNAME_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
_hashing = {"method": "scrypt", "dummy": ""}  # PASSWORD_HASH_METHOD (use_hash_method) sets it at start


def use_hash_method(method: str) -> None:
    """PASSWORD_HASH_METHOD (docs/api.md §1): how new passwords are hashed in this process. Existing hashes
    keep their own method (werkzeug reads it from the hash)."""
    if method != _hashing["method"]:
        _hashing.update(method=method, dummy="")


def _dummy_hash() -> str:
    """A fixed hash to check against when the user does not exist, so timing does not tell."""
    if not _hashing["dummy"]:
        _hashing["dummy"] = generate_password_hash("not-a-password", method=_hashing["method"])
    return _hashing["dummy"]


def parse_permissions(value: Any) -> str:
    perms = sorted({p.strip() for p in value.split(",") if p.strip()})
    unknown = [p for p in perms if p not in PERMISSIONS]
    if unknown or not perms:
        raise ValidationFailed(
            f"permissions must be a comma-separated subset of {', '.join(PERMISSIONS)}",
            {"permissions": [f"unknown permission: {p}" for p in unknown] or ["empty"]},
        )
    return ",".join(perms)


def save_admin(username: str, password: str, permissions: str = "review,feedback") -> AdminUser:
    """Create the admin or update password and permissions; either way it is active."""
    if not USERNAME_RE.match(username or ""):
        raise ValidationFailed("username must be 1-64 letters, digits or . _ @ -", {"username": ["invalid"]})
    if not password or len(password) < 8:
        raise ValidationFailed("password must have at least 8 characters", {"password": ["too short"]})
    perms = parse_permissions(permissions)
    fields = {
        "password_hash": generate_password_hash(password, method=_hashing["method"]),
        "permissions": perms,
        "active": True,
        "session_nonce": secrets.token_hex(8),
    }
    with immediate():
        user = AdminUser.get_or_none(AdminUser.username == username)
        if user is None:
            return AdminUser.create(username=username, created_at=now_iso(), **fields)
        AdminUser.update(**fields).where(AdminUser.id == user.id).execute()
        return AdminUser.get_by_id(user.id)


def ensure_admin(username: str, password: str, permissions: str = "review,feedback") -> tuple[AdminUser, bool]:
    """save_admin for settings read at every start; (user, changed). An account that already matches is left
    as it is: rewriting it would change its session nonce (signing that admin out) and undo a deactivation."""
    user = AdminUser.get_or_none(AdminUser.username == username)
    if (
        user is not None
        and user.permissions == parse_permissions(permissions)
        and check_password_hash(user.password_hash, password)
    ):
        return user, False
    return save_admin(username, password, permissions), True


def has_active_admin() -> bool:
    """Whether anyone can sign in: a new instance has no admin, and its start says how to add one."""
    return AdminUser.select().where(AdminUser.active == True).exists()  # noqa: E712 (peewee expression)


def new_unguessable_id() -> str:
    """A session's id (what logout ends) or the id a known-device cookie carries (docs/api.md §3)."""
    return secrets.token_urlsafe(16)


class EndedSessions:
    """Ids of sessions signed out before their cookies expire (a copy of a cookie may outlive the
    browser that signed out). Kept in memory for the per-request check and re-read from the
    database every REFRESH_SECONDS, so every process on the database learns of a logout."""

    REFRESH_SECONDS = 5.0
    MARGIN = timedelta(minutes=5)  # a request racing the logout may still re-sign the cookie

    def __init__(self):
        self._ids, self._read_at = set(), float("-inf")
        self._lock = threading.Lock()  # a reload must not drop an id ended while it read

    def __contains__(self, sid):
        if sid is None:
            return False
        if time.monotonic() - self._read_at > self.REFRESH_SECONDS:
            self.reload()
        return sid in self._ids

    def reload(self) -> None:
        self._read_at = time.monotonic()  # first: threads arriving meanwhile use the current set
        with self._lock:
            rows = EndedSession.select(EndedSession.sid).where(EndedSession.expires_at >= now_iso())
            self._ids = {row.sid for row in rows}

    def end(self, sid: str, lifetime_seconds: float) -> None:
        """Sign one session out for good: recorded until its cookie would have expired anyway."""
        expires_at = iso(utcnow() + timedelta(seconds=lifetime_seconds) + self.MARGIN)
        with immediate():
            EndedSession.insert(sid=sid, expires_at=expires_at).on_conflict_ignore().execute()
        with self._lock:
            self._ids.add(sid)

    def sweep(self) -> None:
        """Forget the records whose cookies have expired (at start)."""
        with immediate():
            EndedSession.delete().where(EndedSession.expires_at < now_iso()).execute()
        self.reload()


def set_active(username: str, active: bool) -> bool:
    return AdminUser.update(active=active).where(AdminUser.username == username).execute() == 1


def is_throttled(username: str, ip: str | None, max_failures: int, window_seconds: int) -> bool:
    since = iso(utcnow() - timedelta(seconds=window_seconds))
    recent = LoginAttempt.select().where(LoginAttempt.at >= since)
    by_user = recent.where(LoginAttempt.username == username).count()
    by_ip = recent.where(LoginAttempt.ip == ip).count()
    return by_user >= max_failures or by_ip >= max_failures


def authenticate(
    username: str,
    password: str,
    ip: str | None,
    max_failures: int = 5,
    window_seconds: int = 900,
    device: str | None = None,
) -> tuple[AdminUser | None, str | None]:
    """Returns (user, None) on success or (None, 'invalid_credentials' | 'too_many_attempts').

    The throttle (docs/api.md §3) is read before the slow password check (refuse at once) and again in
    the write transaction that records the outcome, so of N parallel guesses at most `max_failures`
    learn whether they were right. `device`: the id of a known-device cookie issued to this user name.
    """
    username, ip = (username or "").strip()[:64], ip or ""
    keys = (f"{DEVICE_KEY}{device}"[:64],) * 2 if device else (username, ip)
    if is_throttled(*keys, max_failures, window_seconds):
        return None, "too_many_attempts"
    user = AdminUser.get_or_none(AdminUser.username == username) if username else None
    ok = check_password_hash(user.password_hash if user else _dummy_hash(), password or "")
    ok = bool(ok and user and user.active)
    with immediate():
        if is_throttled(*keys, max_failures, window_seconds):
            return None, "too_many_attempts"
        if ok and user is not None:
            AdminUser.update(last_login_at=now_iso()).where(AdminUser.id == user.id).execute()
        else:
            # Rows past the window count for nothing: gone here, the table holds one window of failures.
            LoginAttempt.delete().where(LoginAttempt.at < iso(utcnow() - timedelta(seconds=window_seconds))).execute()
            LoginAttempt.create(username=keys[0], ip=keys[1], at=now_iso())
    if not ok:
        log.info("login failed for a user name from %s", "a known device" if device else ip)
        return None, "invalid_credentials"
    return user, None


def token_matches(presented: str | None, configured_tokens: Any) -> bool:
    """Constant-time comparison against every configured token (rotation); a list, not any(), so no token
    is skipped."""
    if not presented:
        return False
    return any([hmac.compare_digest(presented.encode(), token.encode()) for token in configured_tokens])


def channel_for_client_token(presented: str | None, channel_tokens: dict[str, str]) -> str | None:
    """x-feedback-client-token -> channel name, or None (every token compared, as in token_matches)."""
    if not presented:
        return None
    found = [name for name, token in channel_tokens.items() if hmac.compare_digest(presented.encode(), token.encode())]
    return found[-1] if found else None
