"""How the text values of settings read: lists, pairs, rate limits, retry delays, preview recipients.

Environment variables are text; services.settings checks and types them once at start with these.
"""
import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rules.vocabulary import DEFAULT_ACCOUNTS

PERIOD_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_LIMIT = re.compile(r"^\s*(\d+)\s*(?:/|per)\s*(\d+)?\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)
# Seconds to wait after each failed webhook attempt: 9 attempts over about 7.5 hours.
DEFAULT_RETRY_DELAYS = (10.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0)


def split_list(value: Any) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']"""
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def preview_recipients(value: Any, accounts: Any = DEFAULT_ACCOUNTS) -> dict[str, tuple[str, ...]]:
    """WECHAT_PREVIEW_RECIPIENTS -> {account: (WeChat ID, ...)} for every account."""
    if isinstance(value, dict):
        return {account: tuple(split_list(value.get(account))) for account in accounts}
    text = str(value or "")
    if ":" not in text:
        return dict.fromkeys(accounts, tuple(split_list(text)))
    found: dict[str, tuple[str, ...]] = dict.fromkeys(accounts, ())
    for part in text.split(";"):
        account, _, ids = part.partition(":")
        if account.strip() in found:
            found[account.strip()] = tuple(split_list(ids))
    return found


def split_pairs(value: Any) -> dict[str, str]:
    """'web=tok1,ios=tok2' -> {'web': 'tok1', 'ios': 'tok2'}"""
    if isinstance(value, dict):
        return dict(value)
    pairs = {}
    for item in split_list(value):
        name, sep, token = item.partition("=")
        if sep and name.strip() and token.strip():
            pairs[name.strip()] = token.strip()
    return pairs


def parse_limits(text: str) -> list[tuple[int, int]]:
    """'20/minute;200/day' -> [(20, 60), (200, 86400)]; '' -> [] (no limit)."""
    limits = []
    for part in str(text or "").split(";"):
        if not part.strip():
            continue
        match = _LIMIT.match(part)
        if not match or int(match.group(1)) < 1:
            raise ValueError(f"rate limit {part.strip()!r} is not of the form N/period (second, minute, hour, day), "
                             "e.g. 20/minute;200/day")
        count, multiple, unit = int(match.group(1)), int(match.group(2) or 1), match.group(3).lower()
        limits.append((count, multiple * PERIOD_SECONDS[unit]))
    return limits


MAX_DELAY_SECONDS = 30 * 86400  # a longer wait is a mistake (and would overflow a date)


def parse_delays(value: str | list | tuple, default: tuple[float, ...] = DEFAULT_RETRY_DELAYS) -> tuple[float, ...]:
    """'10,30,120' -> (10.0, 30.0, 120.0); empty: `default`. ValueError unless each is a number of seconds
    from 0 to 30 days (not NaN, not infinite) and there is at least one."""
    if not value or (isinstance(value, str) and not value.strip()):
        return default
    parts = list(value) if isinstance(value, (list, tuple)) else str(value).split(",")
    delays = tuple(float(part) for part in parts if str(part).strip())
    if not delays or not all(0 <= delay <= MAX_DELAY_SECONDS for delay in delays):  # NaN fails both
        raise ValueError(f"delays must be seconds from 0 to {MAX_DELAY_SECONDS}, at least one")
    return delays


ZONE_NAME_LIMIT = 64  # the longest tzdata name has 32 characters; a longer one is not looked up at all


def time_zone(name: Any) -> ZoneInfo | None:
    """REVIEW_TIME_ZONE (or the browser's review_tz cookie) as a zone; None for a name the time zone
    database lacks, a folder of it ("Asia": OSError) or one too long for a file name (docs/api.md §14)."""
    text = str(name or "")
    if len(text) > ZONE_NAME_LIMIT:
        return None
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


_QUOTA = re.compile(r"^\s*(\d{1,3})\s*/\s*(day|month)\s*$", re.IGNORECASE)


def mass_quota(value: Any) -> tuple[int, str]:
    """WECHAT_<CODE>_MASS_QUOTA: 'N/day' or 'N/month' (unset: 1/day) -> (N, 'day' | 'month'); ValueError else."""
    match = _QUOTA.match(str(value or "1/day"))
    if not match or not 1 <= int(match[1]) <= 100:
        raise ValueError(f"must be N/day or N/month with N from 1 to 100 (1/day for a subscription account, "
                         f"4/month for a service account), not {value!r}")
    return int(match[1]), match[2].lower()
