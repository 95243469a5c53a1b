"""Refusals of settings the service cannot run with (docs/api.md §1): each names the setting, and a
secret's value is never quoted. Called once at start by services.settings.Settings.from_config."""
import importlib.util
import math
import re
from typing import Any
from urllib.parse import urlsplit

from playhouse import db_url

from rules import accounts
from rules.limits import WECHAT_ID_PATTERN
from rules.vocabulary import PAGE_LANGUAGES, WEBHOOK_EVENTS
from services.settings.team import team_settings
from services.settings.values import parse_delays, parse_limits, preview_recipients, split_list, time_zone

RATE_LIMIT_SETTINGS = {"ip": "FEEDBACK_RATE_LIMIT_PER_IP", "device": "FEEDBACK_RATE_LIMIT_PER_DEVICE",
                       "version": "FEEDBACK_RATE_LIMIT_PER_VERSION", "channel": "FEEDBACK_RATE_LIMIT_PER_CHANNEL"}

# Settings that must be at least 1 (0 would hang every request, lock every sign-in, time out at once).
_AT_LEAST_ONE = ("THREADS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "FEEDBACK_DUPLICATE_WINDOW_SECONDS",
                 "CONNECTION_IDLE_SECONDS", "REVIEW_PRESENCE_SECONDS")


class SettingsError(ValueError):
    """A setting the service cannot run with; the message names it (start-up stops)."""


def check_settings(config: Any) -> None:
    """Refuse values that would only fail later (a port out of range, no threads, no sign-in)."""
    try:
        configured = accounts.parse(config.get("WECHAT_ACCOUNTS"))
    except ValueError as exc:
        raise SettingsError(f"WECHAT_ACCOUNTS: {exc}; write code=name pairs separated by commas") from None
    for code in configured:
        key = config.get(accounts.setting_prefix(code) + "_AES_KEY") or ""
        if key and not re.fullmatch(r"[A-Za-z0-9+/]{43}", key):  # the value is a secret: never quoted
            raise SettingsError(f"{accounts.setting_prefix(code)}_AES_KEY must be the 43 characters the platform "
                                "shows as EncodingAESKey")
    age = config.get("WECHAT_EVENT_MAX_AGE", 300)
    if isinstance(age, bool) or not isinstance(age, int) or not 1 <= age <= 86400:
        raise SettingsError(f"WECHAT_EVENT_MAX_AGE must be a whole number of seconds from 1 to 86400, not {age!r}")
    hour, days = config.get("WECHAT_STATS_HOUR", 9), config.get("WECHAT_STATS_DAYS", 7)
    if isinstance(hour, bool) or not isinstance(hour, int) or not 0 <= hour <= 23:
        raise SettingsError(f"WECHAT_STATS_HOUR must be an hour from 0 to 23, not {hour!r}")
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 365:
        raise SettingsError(f"WECHAT_STATS_DAYS must be a whole number of days from 1 to 365, not {days!r}")
    try:
        parse_delays(config.get("WECHAT_PUBLISH_POLL_DELAYS") or "")
    except ValueError:
        raise SettingsError("WECHAT_PUBLISH_POLL_DELAYS must be seconds (0 to 30 days) separated by commas, e.g. "
                            "60,120,300") from None
    for name in ("PORT", *_AT_LEAST_ONE):
        value = config.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (name == "PORT" and value > 65535):
            limit = "1 to 65535" if name == "PORT" else "a whole number of at least 1"
            raise SettingsError(f"{name} must be {limit}, not {value!r}")
    proxies = config.get("TRUSTED_PROXIES")
    if isinstance(proxies, bool) or not isinstance(proxies, int) or proxies < 0:
        raise SettingsError(f"TRUSTED_PROXIES must be a whole number of at least 0, not {proxies!r}")
    for name, value in config.items():  # nan, inf or 1e309 would start, then fail every call that reads it
        if isinstance(value, float) and not math.isfinite(value):
            raise SettingsError(f"{name} must be a finite number, not {value!r}")
    timeout = config.get("WECHAT_TIMEOUT_SECONDS")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
        raise SettingsError(f"WECHAT_TIMEOUT_SECONDS must be a number of seconds above 0 and at most 600, "
                            f"not {timeout!r}")
    method = config.get("PASSWORD_HASH_METHOD", "scrypt")
    if not isinstance(method, str) or not re.fullmatch(r"scrypt(:\d+:\d+:\d+)?|pbkdf2(:sha256|:sha512)(:[1-9]\d*)?",
                                                      method):
        raise SettingsError(f"PASSWORD_HASH_METHOD must be scrypt or pbkdf2:sha256:<iterations>, not {method!r}")
    concurrency = config.get("WECHAT_UPLOAD_CONCURRENCY")
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or not 1 <= concurrency <= 32:
        raise SettingsError(f"WECHAT_UPLOAD_CONCURRENCY must be a whole number from 1 to 32, not {concurrency!r}")
    recipients = config.get("WECHAT_PREVIEW_RECIPIENTS")
    if isinstance(recipients, str) and ":" in recipients:
        named = {part.partition(":")[0].strip() for part in recipients.split(";") if part.strip()}
        if unknown_accounts := sorted(named - set(configured)):
            raise SettingsError(f"WECHAT_PREVIEW_RECIPIENTS names unknown accounts {', '.join(unknown_accounts)}; "
                                "write account: id1, id2; other-account: id3")
    low, high = config.get("REVIEW_COVER_RATIO_MIN"), config.get("REVIEW_COVER_RATIO_MAX")
    if not 0 < low <= high:
        raise SettingsError(f"REVIEW_COVER_RATIO_MIN ({low}) must be above 0 and at most "
                            f"REVIEW_COVER_RATIO_MAX ({high})")
    tokens = config.get("FEEDBACK_CLIENT_TOKENS")
    if isinstance(tokens, str):
        items = split_list(tokens)
        for number, item in enumerate(items, 1):
            name, sep, token = item.partition("=")
            if not (sep and name.strip() and token.strip()):  # the value is a secret: never quoted
                raise SettingsError(f"FEEDBACK_CLIENT_TOKENS must be channel=token pairs separated by commas; "
                                    f"item {number} of {len(items)} is not one")
    if (language := config.get("REVIEW_DEFAULT_LANGUAGE")) not in PAGE_LANGUAGES:
        raise SettingsError(f"REVIEW_DEFAULT_LANGUAGE must be {' or '.join(PAGE_LANGUAGES)}, not {language!r}")
    if time_zone(zone := config.get("REVIEW_TIME_ZONE")) is None:
        raise SettingsError(f"REVIEW_TIME_ZONE must be a time zone name like Asia/Shanghai, not {zone!r}")
    if not split_list(config.get("FEEDBACK_TYPES")):
        raise SettingsError("FEEDBACK_TYPES must name at least one feedback type")
    for name in ("WECHAT_API_BASE", "REVIEW_AGENT_WEBHOOK_URL"):
        value = str(config.get(name) or "")
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise SettingsError(f"{name} must be an http:// or https:// address, not {value!r}")
    if config.get("DATABASE_URL"):
        check_database_url(config["DATABASE_URL"])
    try:
        parse_delays(config.get("REVIEW_WEBHOOK_RETRY_DELAYS") or "")
    except ValueError:
        raise SettingsError("REVIEW_WEBHOOK_RETRY_DELAYS must be seconds (0 to 30 days) separated by commas, e.g. "
                            "10,30,120") from None
    offered = [name for names in preview_recipients(config.get("WECHAT_PREVIEW_RECIPIENTS"), configured).values()
               for name in names]
    if bad := [name for name in offered if not re.fullmatch(WECHAT_ID_PATTERN, name)]:
        raise SettingsError(f"WECHAT_PREVIEW_RECIPIENTS holds {bad[0]!r}, not a WeChat ID (letters, digits, '_', '-')")
    unknown = set(split_list(config.get("REVIEW_AGENT_WEBHOOK_EVENTS"))) - set(WEBHOOK_EVENTS)
    if unknown:
        raise SettingsError(f"REVIEW_AGENT_WEBHOOK_EVENTS names unknown event types {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(WEBHOOK_EVENTS)}")
    try:
        team_settings(config)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    for name in RATE_LIMIT_SETTINGS.values():
        try:
            parse_limits(config.get(name, ""))
        except ValueError as exc:
            raise SettingsError(f"{name}: {exc}") from None


def check_database_url(url: str) -> None:
    """SettingsError unless `url` names a database peewee can open with an installed driver."""
    if urlsplit(url).scheme not in db_url.schemes:
        raise SettingsError(f"DATABASE_URL must start with one of {', '.join(sorted(db_url.schemes))}://")
    if urlsplit(url).scheme.startswith("postgres") \
            and not any(importlib.util.find_spec(driver) for driver in ("psycopg2", "psycopg")):
        raise SettingsError("DATABASE_URL names PostgreSQL, whose driver is not installed: "
                            "pip install -e '.[postgres]'")
