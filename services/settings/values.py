"""How settings' values read (docs/api.md §1): kinds of value as marshmallow fields that carry the setting's
default, help and what a value must be, so a refusal and the docs' table say the same. A value reads the
same as text (the environment) or typed (config.py, a test's config)."""

import importlib.util
import re
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from marshmallow import ValidationError, fields, validate
from playhouse import db_url

PERIOD_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_LIMIT = re.compile(r"^\s*(\d+)\s*(?:/|per)\s*(\d+)?\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)
# Seconds to wait after each failed webhook attempt: 9 attempts over about 7.5 hours.
DEFAULT_RETRY_DELAYS = (10.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0)
MAX_DELAY_SECONDS = 30 * 86400  # a longer wait is a mistake (and would overflow a date)
ZONE_NAME_LIMIT = 64  # the longest tzdata name has 32 characters; a longer one is not looked up at all


class SettingsError(ValueError):
    """A setting the service cannot run with; the message names it (start-up stops)."""


class Refusal(ValueError):
    """A parse's own words for what is wrong ("names unknown accounts mars; …"), after the setting's name."""


def setting(
    kind: type[fields.Field],
    default: Any,
    help: str,
    must: str = "must be text",
    *,
    secret: bool = False,
    env: bool = True,
    follows: str | None = None,
    **options: Any,
) -> Any:
    """One setting's field. A refusal reads "NAME <must>, not <value>" (a secret's value never shown);
    `must` is the docs' "value" column too. `follows`: unset, it takes that setting's value (a switch split
    from an older one keeps what a team had chosen)."""
    messages: dict[str, Any] = {"invalid": must, "null": must, "too_large": must, "special": "must be a finite number"}
    return kind(
        metadata={"default": default, "help": help, "must": must, "secret": secret, "env": env, "follows": follows},
        error_messages=messages,
        **options,
    )


class Parsed(fields.Field):
    """A value `parse` reads; its ValueError refuses the value with `must`, a Refusal with its own words."""

    def __init__(self, parse: Callable[[Any], Any], **options: Any) -> None:
        self.parse = parse
        super().__init__(**options)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        try:
            return self.parse(value)
        except Refusal as exc:
            raise ValidationError(str(exc)) from None
        except (TypeError, ValueError, LookupError):
            raise ValidationError(self.metadata["must"]) from None


def parsed(parse: Callable[[Any], Any], default: Any, help: str, must: str, **options: Any) -> Any:
    return setting(Parsed, default, help, must, parse=parse, **options)


def _whole(value: Any) -> int:
    """From text too; a fraction is refused, not cut; a timedelta (Flask's session lifetime) is its seconds."""
    if isinstance(value, (bool, float)):
        raise ValueError(value)
    return int(value.total_seconds()) if isinstance(value, timedelta) else int(value)


def whole(default: int, help: str, low: int = 1, high: int | None = None) -> Any:
    must = (
        f"must be a whole number from {low} to {high}"
        if high is not None
        else f"must be a whole number of at least {low}"
    )
    return parsed(_whole, default, help, must, validate=validate.Range(low, high, error=must))


def number(default: float, help: str, high: float | None = None) -> Any:
    """Above 0, at most `high`; nan, inf and 1e309 are refused (marshmallow's allow_nan=False)."""
    must = "must be a number above 0" + (f" and at most {high:g}" if high is not None else "")
    return setting(fields.Float, default, help, must, validate=validate.Range(0, high, min_inclusive=False, error=must))


_FLAGS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def flag(default: bool, help: str, follows: str | None = None) -> Any:
    """1/true/yes/on or 0/false/no/off, in any case ("TRUE", " On ")."""
    parse = lambda value: _FLAGS[str(value).strip().lower()]  # noqa: E731
    return parsed(parse, default, help, "must be true or false", follows=follows)


def text(default: str, help: str, must: str = "must be text", *, secret: bool = False, pattern: str = "") -> Any:
    check = validate.Regexp(pattern, error=must) if pattern else None
    return setting(fields.String, default, help, must, secret=secret, validate=check)


def address(default: str, help: str, *, secret: bool = False) -> Any:
    """An http(s) address, blank for the default; a robot's address holds its key, so it is never shown."""

    def parse(value: Any) -> str:
        parts = urlsplit(value := str(value).strip())
        if value and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(value)
        return value or default

    return parsed(parse, default, help, "must be an http:// or https:// address", secret=secret)


def split_list(value: Any) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']"""
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def words(
    default: str,
    help: str,
    *,
    known: Iterable[str] = (),
    what: str = "",
    into: type = tuple,
    at_least_one: bool = False,
    must: str = "must be a comma-separated list",
) -> Any:
    """A comma-separated list; each one of `known` when given."""

    def parse(value: Any) -> Any:
        found = split_list(value)
        if known and (unknown := sorted(set(found) - set(known))):
            raise Refusal(f"names unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
        if at_least_one and not found:
            raise Refusal(f"must name at least one {what}")
        return into(found)

    return parsed(parse, default, help, must)


def pairs(default: str, help: str) -> Any:
    """'web=tok1,ios=tok2' -> {'web': 'tok1', 'ios': 'tok2'}; the tokens are secrets: an item is named by number."""

    def parse(value: Any) -> dict[str, str]:
        items = split_list(value) if not isinstance(value, dict) else [f"{k}={v}" for k, v in value.items()]
        if bad := [number for number, item in enumerate(items, 1) if not all(map(str.strip, item.partition("=")))]:
            raise Refusal(f"must be channel=token pairs separated by commas; item {bad[0]} of {len(items)} is not one")
        return {name.strip(): token.strip() for name, _, token in (item.partition("=") for item in items)}

    return parsed(parse, default, help, "must be channel=token pairs separated by commas", secret=True)


def parse_limits(text: Any) -> tuple[tuple[int, int], ...]:
    """'20/minute;200/day' -> ((20, 60), (200, 86400)); '' -> () (no limit)."""
    matches = [_LIMIT.match(part) for part in str(text or "").split(";") if part.strip()]
    if not all(match and int(match.group(1)) >= 1 for match in matches):
        raise ValueError(text)
    return tuple((int(m.group(1)), int(m.group(2) or 1) * PERIOD_SECONDS[m.group(3).lower()]) for m in matches if m)


def limits(default: str, help: str) -> Any:
    return parsed(
        parse_limits,
        default,
        help,
        "must be N/period (second, minute, hour, day) separated by ';', e.g. 20/minute;200/day",
    )


def delays(default: str, help: str) -> Any:
    """Seconds from 0 to 30 days (NaN fails both), at least one; blank reads as the default."""

    def parse(value: Any) -> tuple[float, ...]:
        parts = list(value) if isinstance(value, (list, tuple)) else (str(value).strip() or default).split(",")
        found = tuple(float(part) for part in parts if str(part).strip())
        if not found or not all(0 <= delay <= MAX_DELAY_SECONDS for delay in found):
            raise ValueError(value)
        return found

    return parsed(parse, default, help, "must be seconds (0 to 30 days) separated by commas, e.g. " + default)


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


def zone(default: str, help: str) -> Any:
    def parse(value: Any) -> ZoneInfo:
        if (found := time_zone(value)) is None:
            raise ValueError(value)
        return found

    return parsed(parse, default, help, "must be a time zone name like Asia/Shanghai")


def check_database_url(url: str) -> None:
    """SettingsError unless `url` names a database peewee can open with an installed driver."""
    if urlsplit(url).scheme not in db_url.schemes:
        raise SettingsError(f"DATABASE_URL must start with one of {', '.join(sorted(db_url.schemes))}://")
    if urlsplit(url).scheme.startswith("postgres") and not any(
        importlib.util.find_spec(driver) for driver in ("psycopg2", "psycopg")
    ):
        raise SettingsError(
            "DATABASE_URL names PostgreSQL, whose driver is not installed: pip install -e '.[postgres]'"
        )


def database(help: str) -> Any:
    def parse(url: Any) -> str:
        try:
            check_database_url(str(url)) if url else None
        except SettingsError as exc:
            raise Refusal(str(exc).removeprefix("DATABASE_URL ")) from None
        return str(url or "")

    return parsed(parse, "", help, "must be a database URL")
