"""Settings: defaults -> instance/config.py -> environment -> test config (docs/api.md §1).

The package holds every setting: this module the defaults and the typed `Settings` services receive,
`checks` the refusals at start, `values` how text values read, `team` who hears of tasks (§15)."""
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from rules import accounts
from rules.limits import DEFAULT_DUPLICATE_WINDOW_SECONDS
from rules.vocabulary import DEFAULT_ACCOUNTS, DEFAULT_WEBHOOK_EVENTS
from services.settings.checks import (  # noqa: F401 (SettingsError and check_database_url: for callers)
    RATE_LIMIT_SETTINGS,
    SettingsError,
    check_database_url,
    check_settings,
)
from services.settings.team import TEAM_DEFAULTS, TeamSettings, team_settings
from services.settings.values import (
    mass_quota,
    parse_delays,
    parse_limits,
    preview_recipients,
    split_list,
    split_pairs,
    time_zone,
)

# each account's own (docs/api.md §18; the mass send's quota and protection: §21)
ACCOUNT_SETTINGS = ("_APPID", "_SECRET", "_TOKEN", "_AES_KEY", "_MASS_QUOTA", "_MASS_PROTECTION")
# freepublish/get is asked after each of these (seconds), then hourly, for 24 h (docs/api.md §18)
DEFAULT_POLL_DELAYS = "60,120,300,600,1800,3600"


def account_defaults(codes: Any) -> dict[str, str]:
    """WECHAT_<CODE>_APPID, _SECRET, _TOKEN, _AES_KEY of each account, unset."""
    return {accounts.setting_prefix(code) + suffix: "" for code in codes for suffix in ACCOUNT_SETTINGS}


def configured_accounts(*sources: Mapping[str, Any]) -> tuple[str, ...]:
    """The account codes the first source naming WECHAT_ACCOUNTS gives (the defaults' when none does
    or it does not read: the check at start names that setting)."""
    for source in sources:
        if source.get("WECHAT_ACCOUNTS"):
            try:
                return tuple(accounts.parse(source["WECHAT_ACCOUNTS"]))
            except ValueError:
                break
    return DEFAULT_ACCOUNTS


DEFAULTS = {
    "HOST": "127.0.0.1",
    "PORT": 8000,
    "THREADS": 8,
    "SHUTDOWN_GRACE_SECONDS": 30,  # after SIGTERM/SIGINT, requests in flight get this long to finish
    "CONNECTION_IDLE_SECONDS": 30,  # an idle keep-alive connection is closed after this (docs/api.md §11)
    "DATABASE_URL": "",
    "REVIEW_AGENT_TOKEN": "",
    "REVIEW_AGENT_WEBHOOK_URL": "",
    "REVIEW_AGENT_WEBHOOK_SECRET": "",
    "REVIEW_AGENT_WEBHOOK_EVENTS": ",".join(DEFAULT_WEBHOOK_EVENTS),  # which outbox events are sent
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
    # The same feedback (channel, content, device, address) within this many seconds is answered 409.
    "FEEDBACK_DUPLICATE_WINDOW_SECONDS": DEFAULT_DUPLICATE_WINDOW_SECONDS,
    "WECHAT_API_BASE": "https://api.weixin.qq.com",
    # The team's accounts, code=name pairs (docs/api.md §18); each has WECHAT_<CODE>_APPID, _SECRET, _TOKEN, _AES_KEY.
    "WECHAT_ACCOUNTS": ",".join(DEFAULT_ACCOUNTS),
    **account_defaults(DEFAULT_ACCOUNTS),
    "WECHAT_PUBLISH_POLL_DELAYS": DEFAULT_POLL_DELAYS,
    "WECHAT_EVENT_MAX_AGE": 300,  # seconds a pushed event's timestamp may be from the clock, either way (§18)
    "WECHAT_LIVE_WORKER_ENABLED": True,  # scheduled going live and result polling (docs/api.md §18)
    "WECHAT_STATS_ENABLED": True,  # the daily fetch of what readers did (docs/api.md §19)
    "WECHAT_STATS_HOUR": 9,  # the day before is fetched from this hour on (REVIEW_TIME_ZONE): the platform's is ready
    "WECHAT_STATS_DAYS": 7,  # accounts with an article live within this many days are fetched
    "WECHAT_TIMEOUT_SECONDS": 20.0,
    "WECHAT_UPLOAD_CONCURRENCY": 4,  # images of one publish job uploaded at the same time
    # WeChat IDs the page offers for a phone preview: "silicon-rise: id1, id2; carbon-fitness: id3", or
    # "id1, id2" for both accounts, or in config.py {"silicon-rise": "id1, id2"}.
    "WECHAT_PREVIEW_RECIPIENTS": "",
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
    # werkzeug's method for new password hashes: scrypt, or pbkdf2:sha256:<iterations> (tests make it cheap)
    "PASSWORD_HASH_METHOD": "scrypt",
    "LOGIN_MAX_FAILURES": 5,
    "LOGIN_FAILURE_WINDOW_SECONDS": 15 * 60,
    "WEBHOOK_SENDER_ENABLED": True,
    "FEEDBACK_INDEXER_ENABLED": True,  # keyword indexes filled after the request (models.feedback)
    "WAL_CHECKPOINTER_ENABLED": True,  # SQLite WAL copied back by a background thread (models.base)
    "REVIEW_WEBHOOK_RETRY_DELAYS": "",  # seconds after each failed attempt, e.g. "10,30,120"
    "METRICS_TOKEN": "",  # GET /metrics answers only with `Authorization: Bearer <this>`; unset: 404
    "REVIEW_PRESENCE_SECONDS": 60,  # an admin counts as on a task page this long after its last heartbeat
    "REVIEW_DEFAULT_LANGUAGE": "zh-CN",  # admin pages without a review_lang cookie or Accept-Language (docs/api.md §14)
    "REVIEW_TIME_ZONE": "Asia/Shanghai",  # the zone of times in the pages' HTML, before the script shows the browser's
    **TEAM_DEFAULTS,  # group robots and e-mail (docs/api.md §15), in services/settings/team.py
}

_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
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


def from_environment(environ: Mapping[str, str] | None = None, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every known setting can come from an environment variable of the same name."""
    environ = os.environ if environ is None else environ
    out = {}
    for name, default in (known or DEFAULTS).items():
        if name in environ and not isinstance(default, dict):
            out[name] = _coerce(name, environ[name], default)
    return out


def typed(config: MutableMapping[str, Any], known: dict[str, Any] | None = None) -> None:
    """Text values of known typed settings (config.py's SESSION_COOKIE_SECURE = "false") read as the
    environment's are: "false" was a true value there."""
    for name, default in (known or DEFAULTS).items():
        value = config.get(name)
        if isinstance(value, str) and isinstance(default, (bool, int, float)):
            config[name] = _coerce(name, value, default)


# --- Typed settings: parsed and checked once at start; services receive this object, never a dict. ---

RateLimits = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Credentials:
    appid: str
    secret: str = field(repr=False)


@dataclass(frozen=True)
class EventKeys:
    """What checks and opens the platform's event pushes to one account's server URL (docs/api.md §18)."""

    token: str = field(repr=False)
    aes_key: str = field(repr=False)  # EncodingAESKey, 43 characters; "" when unset (no safe mode)


@dataclass(frozen=True)
class Settings:
    """Every setting the services read, typed. Built by `Settings.from_config` from the merged mapping."""

    instance_path: str
    uploads_path: str
    database_url: str
    agent_tokens: tuple[str, ...] = field(repr=False)
    webhook_url: str
    webhook_secret: str = field(repr=False)
    webhook_retry_delays: tuple[float, ...]
    webhook_events: frozenset[str]  # the outbox event types sent to the agent
    feedback_client_tokens: dict[str, str] = field(repr=False)  # channel -> token
    feedback_anonymous_channels: frozenset[str]
    feedback_types: tuple[str, ...]
    feedback_max_body_bytes: int
    feedback_duplicate_window_seconds: int
    feedback_rate_limits: dict[str, RateLimits]  # ip, device, version, channel -> ((count, seconds), ...)
    wechat_api_base: str
    accounts: dict[str, str]  # code -> the name people know it by, in the order configured
    wechat_event_keys: dict[str, EventKeys]  # account -> its server URL's token; an account without one is absent
    mass_quotas: dict[str, tuple[int, str]]  # account -> (sends, "day" | "month") in REVIEW_TIME_ZONE
    mass_protected: frozenset[str]  # accounts with 群发保护: an administrator confirms each send in WeChat
    publish_poll_delays: tuple[float, ...]
    event_max_age: int  # seconds, either way, between a push's timestamp and the clock
    stats_hour: int
    stats_days: int
    wechat_credentials: dict[str, Credentials]  # account -> credentials; an unset account is absent
    wechat_timeout_seconds: float
    wechat_upload_concurrency: int
    wechat_preview_recipients: dict[str, tuple[str, ...]]  # account -> WeChat IDs offered on the page
    wechat_theme_overrides: dict[str, dict[str, str]]
    cover_ratio: tuple[float, float]
    remote_image_hosts: tuple[str, ...]
    remote_image_allow_private: bool
    hash_method: str
    login_max_failures: int
    login_failure_window_seconds: int
    metrics_token: str = field(repr=False)
    presence_seconds: int  # docs/api.md §15 Presence: how long a page heartbeat counts
    default_language: str  # of the admin pages: zh-CN or en
    time_zone: ZoneInfo  # of the times in the pages' HTML
    team: TeamSettings  # who hears of tasks and feedback (docs/api.md §15)

    @classmethod
    def from_config(cls, config: Any) -> "Settings":
        """Check the merged settings (SettingsError names a bad one) and type them."""
        check_settings(config)
        named = accounts.parse(config.get("WECHAT_ACCOUNTS"))
        credentials, event_keys, quotas, protected = {}, {}, {}, set()
        for account in named:
            prefix = accounts.setting_prefix(account)
            try:
                quotas[account] = mass_quota(config.get(prefix + "_MASS_QUOTA"))
            except ValueError as exc:
                raise SettingsError(f"{prefix}_MASS_QUOTA {exc}") from None
            protection = str(config.get(prefix + "_MASS_PROTECTION") or "false").strip().lower()
            if protection not in _BOOLEANS:
                raise SettingsError(f"{prefix}_MASS_PROTECTION must be true or false, not {protection!r}")
            if _BOOLEANS[protection]:
                protected.add(account)
            appid, secret = config.get(prefix + "_APPID") or "", config.get(prefix + "_SECRET") or ""
            if appid and secret:
                credentials[account] = Credentials(appid, secret)
            if token := config.get(prefix + "_TOKEN") or "":
                event_keys[account] = EventKeys(token, config.get(prefix + "_AES_KEY") or "")
        return cls(
            instance_path=str(config.get("REVIEW_INSTANCE_PATH") or ""),
            uploads_path=str(config.get("REVIEW_UPLOADS_PATH") or ""),
            database_url=config.get("DATABASE_URL") or "",
            agent_tokens=tuple(split_list(config.get("REVIEW_AGENT_TOKEN"))),
            webhook_url=config.get("REVIEW_AGENT_WEBHOOK_URL") or "",
            webhook_secret=config.get("REVIEW_AGENT_WEBHOOK_SECRET") or "",
            webhook_retry_delays=parse_delays(config.get("REVIEW_WEBHOOK_RETRY_DELAYS") or ""),
            webhook_events=frozenset(split_list(config.get("REVIEW_AGENT_WEBHOOK_EVENTS"))),
            feedback_client_tokens=split_pairs(config.get("FEEDBACK_CLIENT_TOKENS")),
            feedback_anonymous_channels=frozenset(split_list(config.get("FEEDBACK_ANONYMOUS_CHANNELS"))),
            feedback_types=tuple(split_list(config.get("FEEDBACK_TYPES"))),
            feedback_max_body_bytes=int(config.get("FEEDBACK_MAX_BODY_BYTES")),
            feedback_duplicate_window_seconds=int(config.get("FEEDBACK_DUPLICATE_WINDOW_SECONDS")),
            feedback_rate_limits={category: tuple(parse_limits(config.get(name, "")))
                                  for category, name in RATE_LIMIT_SETTINGS.items()},
            wechat_api_base=str(config.get("WECHAT_API_BASE") or DEFAULTS["WECHAT_API_BASE"]),
            accounts=named,
            wechat_event_keys=event_keys,
            mass_quotas=quotas,
            mass_protected=frozenset(protected),
            publish_poll_delays=parse_delays(config.get("WECHAT_PUBLISH_POLL_DELAYS") or "",
                                             default=parse_delays(DEFAULT_POLL_DELAYS)),
            event_max_age=int(config.get("WECHAT_EVENT_MAX_AGE")),
            stats_hour=int(config.get("WECHAT_STATS_HOUR", 9)),
            stats_days=int(config.get("WECHAT_STATS_DAYS", 7)),
            wechat_credentials=credentials,
            wechat_timeout_seconds=float(config.get("WECHAT_TIMEOUT_SECONDS")),
            wechat_upload_concurrency=int(config.get("WECHAT_UPLOAD_CONCURRENCY")),
            wechat_preview_recipients=preview_recipients(config.get("WECHAT_PREVIEW_RECIPIENTS"), named),
            wechat_theme_overrides=dict(config.get("WECHAT_THEME_OVERRIDES") or {}),
            cover_ratio=(float(config.get("REVIEW_COVER_RATIO_MIN")), float(config.get("REVIEW_COVER_RATIO_MAX"))),
            remote_image_hosts=tuple(split_list(config.get("REVIEW_REMOTE_IMAGE_HOSTS"))),
            remote_image_allow_private=bool(config.get("REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE")),
            hash_method=str(config.get("PASSWORD_HASH_METHOD") or "scrypt"),
            login_max_failures=int(config.get("LOGIN_MAX_FAILURES")),
            login_failure_window_seconds=int(config.get("LOGIN_FAILURE_WINDOW_SECONDS")),
            metrics_token=config.get("METRICS_TOKEN") or "",
            presence_seconds=int(config.get("REVIEW_PRESENCE_SECONDS")),
            default_language=config.get("REVIEW_DEFAULT_LANGUAGE"),
            time_zone=time_zone(config.get("REVIEW_TIME_ZONE")) or ZoneInfo("UTC"),  # checked at start
            team=team_settings(config),
        )

    @classmethod
    def with_defaults(cls, overrides: dict[str, Any] | None = None) -> "Settings":
        """The defaults with `overrides` (tests and one-off tools that build no app)."""
        config = {**DEFAULTS, **account_defaults(configured_accounts(overrides or {})), **(overrides or {})}
        typed(config)
        return cls.from_config(config)

    @property
    def temp_path(self) -> str:
        """Where task packages are built (inside the instance folder: same disk as the database)."""
        return os.path.join(self.instance_path, "tmp")

    def theme_overrides_for(self, account: str) -> dict[str, str] | None:
        """The account's theme CSS variables from WECHAT_THEME_OVERRIDES (config.py), or None."""
        return self.wechat_theme_overrides.get(account) or None
