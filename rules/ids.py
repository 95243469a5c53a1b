"""Opaque ids and timestamps (docs/api.md §4: URL-safe ids, ISO 8601 UTC with milliseconds and Z)."""

import secrets
from datetime import UTC, datetime


def new_id(prefix=""):
    """128 random bits, URL-safe; an optional short prefix helps a person read logs.

    Never starting with "-" or "_": a leading "-" reads as an option on a command line and as a
    formula in a spreadsheet (the CSV export would quote it with an apostrophe).
    """
    while not (value := secrets.token_urlsafe(16))[0].isalnum():
        pass  # 2 in 64 draws: redrawn, so the rest stays uniformly random
    return prefix + value


def utcnow():
    return datetime.now(UTC)


def iso(dt):
    """datetime -> '2026-11-21T13:34:00.123Z' (naive values are taken as UTC)."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    # The year by hand: strftime's %Y does not pad years before 1000 to four digits on glibc.
    return f"{dt.year:04d}-{dt:%m-%dT%H:%M:%S}.{dt.microsecond // 1000:03d}Z"


def parse_iso(value):
    """'2026-11-21T13:34:00.123Z' -> an aware datetime (the inverse of iso)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def now_iso():
    return iso(utcnow())
