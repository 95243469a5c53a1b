"""Feedback creation by client apps (docs/api.md §9). The rate limits come before validation but need
deviceId, appName and appVersion, so `parse_json` reads the body leniently once and both steps use it.
"""

import hashlib
import json
import logging
import re
import unicodedata
from datetime import timedelta
from typing import Any

import peewee

from models.feedback import Feedback, next_day_number, recent_duplicate
from models.writes import immediate
from rules.client_input import TextRefused, load_json
from rules.ids import iso, new_id, utcnow
from rules.limits import duration
from schemas.feedback import FeedbackCreateSchema
from services.background import wake
from services.errors import Conflict, RateLimited, StorageUnavailable, ValidationFailed
from services.feedback.indexing import INDEXER
from services.feedback.queries import dump_detail
from services.ratelimit import SlidingWindowLimiter
from services.settings import Settings
from services.team.outbox import feedback_received

log = logging.getLogger(__name__)

_KEY_MAX = 256  # longer values are not used as rate-limit keys (validation refuses them anyway)

# payload key (a field of the create schema) -> model field: appName -> app_name
FIELD_MAP = {key: re.sub(r"([A-Z])", r"_\1", key).lower() for key in FeedbackCreateSchema().fields}
# What an anonymous channel may send (docs/api.md §9): every field but the identifiers, contacts and log.
ANONYMOUS_FIELDS = frozenset(FIELD_MAP) - {"userId", "contactEmail", "contactWechat", "deviceId", "logText"}
ANONYMOUS_EXTRA_FIELDS = frozenset({"envVersion", "locale"})


class _Invalid:
    """Marker for a body that is not JSON."""

    def __init__(self, reason, path="_body"):
        self.reason, self.path = reason, path


def parse_json(raw: bytes) -> Any:
    """bytes -> the decoded JSON value (by the service's one strict rule), or an _Invalid marker."""
    try:
        return load_json(raw)
    except TextRefused as exc:  # JSON, but text the service cannot store: named where it is
        return _Invalid(str(exc), exc.path)
    except ValueError as exc:
        return _Invalid(str(exc).split(":")[0] or "not JSON")


def _key(value):
    if isinstance(value, str) and value.strip() and len(value) <= _KEY_MAX:
        return value.strip()
    return None


def limit_keys(channel: str, client_ip: str | None, payload: Any = None) -> dict[str, str | None]:
    """The rate-limit keys of one request: client IP, deviceId, appName+appVersion, channel."""
    body = payload if isinstance(payload, dict) else {}
    app_name, app_version = _key(body.get("appName")), _key(body.get("appVersion"))
    return {
        "ip": client_ip or "-",
        "device": _key(body.get("deviceId")),
        "version": f"{app_name}\x1f{app_version}" if app_name and app_version else None,
        "channel": channel,
    }


def admit(limiter: SlidingWindowLimiter, channel: str, client_ip: str | None, payload: Any = None) -> None:
    """Count this request; RateLimited with a whole-second Retry-After when a limit is reached."""
    wait = limiter.hit(limit_keys(channel, client_ip, payload))
    if wait is not None:
        raise RateLimited(
            f"too many feedback submissions; wait {wait} seconds and try again", wait, {"retryAfter": wait}
        )


def require_object(payload: Any) -> dict[str, Any]:
    if isinstance(payload, _Invalid):
        problem = "invalid JSON" if payload.path == "_body" else payload.reason  # as the other routes say it
        raise ValidationFailed(f"the request body is not valid JSON: {payload.reason}", {payload.path: [problem]})
    if not isinstance(payload, dict):
        raise ValidationFailed("the request body must be a JSON object", {"_body": ["not a JSON object"]})
    return payload


def check_anonymous_fields(payload: dict[str, Any], channel: str) -> None:
    """Anonymous channels may send only the anonymous diagnostic fields; any other is named in a 400."""
    details = {
        key: [f"not accepted from the anonymous channel {channel!r}"] for key in payload if key not in ANONYMOUS_FIELDS
    }
    extra = payload.get("extra")
    if isinstance(extra, dict):
        for key in extra:
            if key not in ANONYMOUS_EXTRA_FIELDS:
                details[f"extra.{key}"] = [
                    f"not accepted from the anonymous channel {channel!r}; extra may hold only envVersion and locale"
                ]
    if details:
        names = ", ".join(sorted(details))
        raise ValidationFailed(f"the anonymous channel {channel!r} may not send: {names}", details)
    extras = extra if isinstance(extra, dict) else {}
    for key in sorted(ANONYMOUS_EXTRA_FIELDS & set(extras)):
        if extras[key] is not None and not (isinstance(extras[key], str) and len(extras[key]) <= 64):
            details[f"extra.{key}"] = ["must be a string of at most 64 characters"]
    if details:
        path, messages = next(iter(details.items()))
        raise ValidationFailed(f"invalid body: {path}: {messages[0]}", details)


def normalize_text(value: str) -> str:
    """Case, width and white space do not make feedback different."""
    return " ".join(unicodedata.normalize("NFKC", value or "").casefold().split())


def fingerprint(channel: str, data: dict[str, Any], client_ip: str | None) -> str:
    """sha256 of the duplicate fingerprint (docs/api.md §9, duplicates)."""
    if data.get("userId"):
        who = ["user", data["userId"].strip()]
    elif data.get("deviceId"):
        who = ["device", data["deviceId"].strip()]
    else:
        who = ["ip", client_ip or "-"]
    parts = [
        channel,
        normalize_text(data["appName"]),
        normalize_text(data["platform"]),
        data["type"],
        normalize_text(data["title"]),
        normalize_text(data["content"]),
        *who,
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def _next_feedback_no(now):
    """FB-YYYYMMDD-NNNN for the UTC day of `now`; call inside the write transaction."""
    day = now.strftime("%Y%m%d")
    return f"FB-{day}-{next_day_number(day):04d}"


def create_feedback(data: dict[str, Any], channel: str, client_ip: str | None, settings: Settings) -> dict[str, Any]:
    """Store a validated payload; the FeedbackDetail dict (attachments []). The duplicate check, the number
    and the row share one IMMEDIATE transaction, so concurrent identical requests create one record."""
    digest = fingerprint(channel, data, client_ip)
    try:
        with immediate():
            # Taken under the write lock, so creation times follow row ids (the list's tie-break).
            now = utcnow()
            created = iso(now)
            window = settings.feedback_duplicate_window_seconds
            original = recent_duplicate(digest, iso(now - timedelta(seconds=window)))
            if original is not None:
                raise Conflict(
                    f"the same feedback was already submitted as {original.feedback_no} "
                    f"within the last {duration(window)}",
                    {"feedbackId": original.feedback_id, "feedbackNo": original.feedback_no},
                    code="duplicate_feedback",
                )
            fields = {FIELD_MAP[key]: value for key, value in data.items() if key in FIELD_MAP}
            record = Feedback.create(
                feedback_id=new_id(),
                feedback_no=_next_feedback_no(now),
                channel=channel,
                status="unprocessed",
                fingerprint=digest,
                client_ip=client_ip,
                created_at=created,
                updated_at=created,
                **fields,
            )
            feedback_received(settings.team, record)  # docs/api.md §15: in the same transaction
    except (peewee.DatabaseError, peewee.InterfaceError) as exc:
        log.error("feedback from channel %s not stored: %s", channel, type(exc).__name__)
        raise StorageUnavailable(
            "the feedback could not be stored because the database is unavailable; nothing was saved, try again later"
        ) from None
    wake(INDEXER)
    return dump_detail(record, attachments=[])
