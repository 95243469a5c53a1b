"""Settings: defaults -> instance/config.py -> environment -> test config (CONTRACT §1)."""
import importlib.util
import os
from urllib.parse import urlsplit

from playhouse import db_url

DEFAULTS = {
    "HOST": "127.0.0.1",
    "PORT": 8000,
    "THREADS": 8,
    "DATABASE_URL": "",
    "REVIEW_AGENT_TOKEN": "",
    "REVIEW_AGENT_WEBHOOK_URL": "",
    "REVIEW_AGENT_WEBHOOK_SECRET": "",
    "REVIEW_ADMIN_USERNAME": "",
    "REVIEW_ADMIN_PASSWORD": "",
    "FEEDBACK_CLIENT_TOKENS": "",
    "FEEDBACK_ANONYMOUS_CHANNELS": "",
    "FEEDBACK_TYPES": "bug,suggestion,content,account,other",
    "FEEDBACK_MAX_BODY_BYTES": 262144,
    "FEEDBACK_RATE_LIMIT_PER_IP": "20/minute;200/day",
    "FEEDBACK_RATE_LIMIT_PER_DEVICE": "10/minute;100/day",
    "FEEDBACK_RATE_LIMIT_PER_VERSION": "600/minute",
    "FEEDBACK_RATE_LIMIT_PER_CHANNEL": "1200/minute",
    "WECHAT_API_BASE": "https://api.weixin.qq.com",
    "WECHAT_SILICON_RISE_APPID": "",
    "WECHAT_SILICON_RISE_SECRET": "",
    "WECHAT_CARBON_FITNESS_APPID": "",
    "WECHAT_CARBON_FITNESS_SECRET": "",
    "WECHAT_TIMEOUT_SECONDS": 20.0,
    "WECHAT_THEME_OVERRIDES": {},  # {"silicon-rise": {"--primary-color": "#..."}} (config.py only)
    "REVIEW_COVER_RATIO_MIN": 1.0,
    "REVIEW_COVER_RATIO_MAX": 2.5,
    "REVIEW_REMOTE_IMAGE_HOSTS": "mmbiz.qpic.cn",
    "REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE": False,  # allow listed hosts on private/loopback addresses
    "SESSION_COOKIE_SECURE": False,
    # Reverse proxies in front of the service whose X-Forwarded-For/-Proto/-Host are believed (0: none,
    # the headers are ignored, so a client cannot choose the address its rate limits count against).
    "TRUSTED_PROXIES": 0,
    "PERMANENT_SESSION_LIFETIME": 12 * 3600,
    "LOGIN_MAX_FAILURES": 5,
    "LOGIN_FAILURE_WINDOW_SECONDS": 15 * 60,
    "WEBHOOK_SENDER_ENABLED": True,
    "FEEDBACK_INDEXER_ENABLED": True,  # keyword indexes filled after the request (models.feedback)
    "WAL_CHECKPOINTER_ENABLED": True,  # SQLite WAL copied back by a background thread (models.base)
    "REVIEW_WEBHOOK_RETRY_DELAYS": "",  # seconds after each failed attempt, e.g. "10,30,120"
}

# Settings whose values are secrets: never logged or shown.
SECRET_SETTINGS = {
    "REVIEW_AGENT_TOKEN", "REVIEW_AGENT_WEBHOOK_SECRET", "REVIEW_ADMIN_PASSWORD",
    "FEEDBACK_CLIENT_TOKENS", "WECHAT_SILICON_RISE_SECRET", "WECHAT_CARBON_FITNESS_SECRET",
    "SECRET_KEY",
}


class SettingsError(ValueError):
    """A setting the service cannot run with; the message names it (start-up stops)."""


_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
# Settings that must be at least 1 (0 would hang every request, lock every sign-in, time out at once).
_AT_LEAST_ONE = ("THREADS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS")


def _coerce(name, raw, default):
    """Environment values are strings; give them the type of the default."""
    try:
        if isinstance(default, bool):
            return _BOOLEANS[raw.strip().lower()]
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except (KeyError, ValueError):
        kind = "true or false" if isinstance(default, bool) else f"a number like {default!r}"
        raise SettingsError(f"{name} must be {kind}, not {raw!r}") from None
    return raw


def from_environment(environ=None, known=None):
    """Every known setting can come from an environment variable of the same name."""
    environ = os.environ if environ is None else environ
    out = {}
    for name, default in (known or DEFAULTS).items():
        if name in environ and not isinstance(default, dict):
            out[name] = _coerce(name, environ[name], default)
    return out


def typed(config, known=None):
    """Text values of known typed settings (config.py's SESSION_COOKIE_SECURE = "false") read as the
    environment's are: "false" was a true value there."""
    for name, default in (known or DEFAULTS).items():
        value = config.get(name)
        if isinstance(value, str) and isinstance(default, (bool, int, float)):
            config[name] = _coerce(name, value, default)


def check_settings(config):
    """Refuse values that would only fail later (a port out of range, no threads, no sign-in)."""
    for name in ("PORT", *_AT_LEAST_ONE):
        value = config.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (name == "PORT" and value > 65535):
            limit = "1 to 65535" if name == "PORT" else "a whole number of at least 1"
            raise SettingsError(f"{name} must be {limit}, not {value!r}")
    proxies = config.get("TRUSTED_PROXIES")
    if isinstance(proxies, bool) or not isinstance(proxies, int) or proxies < 0:
        raise SettingsError(f"TRUSTED_PROXIES must be a whole number of at least 0, not {proxies!r}")
    timeout = config.get("WECHAT_TIMEOUT_SECONDS")
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise SettingsError(f"WECHAT_TIMEOUT_SECONDS must be a number of seconds above 0, not {timeout!r}")
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
    if not split_list(config.get("FEEDBACK_TYPES")):
        raise SettingsError("FEEDBACK_TYPES must name at least one feedback type")
    for name in ("WECHAT_API_BASE", "REVIEW_AGENT_WEBHOOK_URL"):
        value = str(config.get(name) or "")
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise SettingsError(f"{name} must be an http:// or https:// address, not {value!r}")
    url = config.get("DATABASE_URL")
    if url and urlsplit(url).scheme not in db_url.schemes:
        raise SettingsError(f"DATABASE_URL must start with one of {', '.join(sorted(db_url.schemes))}://")
    if url and urlsplit(url).scheme.startswith("postgres") \
            and not any(importlib.util.find_spec(driver) for driver in ("psycopg2", "psycopg")):
        raise SettingsError("DATABASE_URL names PostgreSQL, whose driver is not installed: "
                            "pip install -e '.[postgres]'")
    from services.feedback.ratelimit import limiter_from_settings
    from services.notifications import parse_delays

    try:
        parse_delays(config.get("REVIEW_WEBHOOK_RETRY_DELAYS") or "")
    except ValueError:
        raise SettingsError("REVIEW_WEBHOOK_RETRY_DELAYS must be seconds separated by commas, e.g. 10,30,120") \
            from None
    try:
        limiter_from_settings(config)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def split_list(value):
    """'a, b,,c' -> ['a', 'b', 'c']"""
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def split_pairs(value):
    """'web=tok1,ios=tok2' -> {'web': 'tok1', 'ios': 'tok2'}"""
    if isinstance(value, dict):
        return dict(value)
    pairs = {}
    for item in split_list(value):
        name, sep, token = item.partition("=")
        if sep and name.strip() and token.strip():
            pairs[name.strip()] = token.strip()
    return pairs
