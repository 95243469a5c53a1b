"""Settings: defaults -> instance/config.py -> environment -> test config (docs/api.md §1).

Each setting is declared once in `declaration` (its kind of value from `values`, default, bounds and help),
parsed once at start by `parse`; services receive the typed `Settings`, the team's part from `team`."""

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any
from zoneinfo import ZoneInfo

from marshmallow import Schema, ValidationError

from rules import accounts
from rules.vocabulary import DEFAULT_ACCOUNTS
from services.settings.declaration import AccountSchema, SettingsSchema
from services.settings.team import TeamSettings, team_settings
from services.settings.values import SettingsError

SETTINGS, ACCOUNT = SettingsSchema(), AccountSchema()
# A setting that follows another is unset here, so it takes that one's value (values.setting).
DEFAULTS = {
    name: setting.metadata["default"] for name, setting in SETTINGS.fields.items() if not setting.metadata["follows"]
}


def configured_accounts(*sources: Mapping[str, Any]) -> tuple[str, ...]:
    """The account codes of the first source naming WECHAT_ACCOUNTS (the defaults' when none does or it
    does not read: the start then stops naming it)."""
    named = next((source["WECHAT_ACCOUNTS"] for source in sources if source.get("WECHAT_ACCOUNTS")), "")
    try:
        return tuple(accounts.parse(named)) if named else DEFAULT_ACCOUNTS
    except ValueError:
        return DEFAULT_ACCOUNTS


def from_environment(environ: Mapping[str, str], codes: Iterable[str] = DEFAULT_ACCOUNTS) -> dict[str, str]:
    """What the environment sets: any declared setting (but config.py's only) and the accounts' own."""
    names = [name for name, setting in SETTINGS.fields.items() if setting.metadata["env"]]
    names += [accounts.setting_prefix(code) + "_" + name for code in codes for name in ACCOUNT.fields]
    return {name: environ[name] for name in names if name in environ}


def _load(schema: Schema, config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`schema`'s settings from `config` (the default where unset), typed; SettingsError names each bad one."""
    data = {name: config.get(prefix + name, _default(schema, config, prefix, name)) for name in schema.fields}
    try:
        return schema.load(data)
    except ValidationError as exc:
        lines = []
        for name, messages in exc.normalized_messages().items():
            message = messages[0] if isinstance(messages, list) else str(messages)
            setting = schema.fields[name].metadata
            if message in (setting["must"], "must be a finite number"):
                message += " (the value is not shown)" if setting["secret"] else f", not {data[name]!r}"
            lines.append(f"{prefix}{name} {message}")
        raise SettingsError("\n".join(lines)) from None


def _default(schema: Schema, config: Mapping[str, Any], prefix: str, name: str) -> Any:
    """An unset setting's value: its default, or the value of the setting it follows."""
    setting = schema.fields[name].metadata
    if setting["follows"]:
        followed = setting["follows"]
        return config.get(prefix + followed, _default(schema, config, prefix, followed))
    return setting["default"]


def parse(config: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of the merged `config`, typed (SettingsError names each it cannot run with); each
    account's own under "ACCOUNTS"."""
    values = _load(SETTINGS, config)
    prefixes = {code: accounts.setting_prefix(code) + "_" for code in values["WECHAT_ACCOUNTS"]}
    own = {code: _load(ACCOUNT, config, prefix) for code, prefix in prefixes.items()}
    values["ACCOUNTS"] = {code: _account(read) for code, read in own.items()}
    return values


def _account(read: Mapping[str, Any]) -> "Account":
    """An account from `_load(ACCOUNT, ...)`'s values."""
    return Account(**{name.lower(): v for name, v in read.items()})


def markdown_table() -> str:
    """The settings table of README.md and docs/api.md (`python -m services.settings` prints it)."""
    rows = list(SETTINGS.fields.items())
    at = list(SETTINGS.fields).index("WECHAT_ACCOUNTS") + 1
    rows[at:at] = [(f"WECHAT_<CODE>_{name}", setting) for name, setting in ACCOUNT.fields.items()]

    def shown(setting: Any) -> str:
        value = setting.metadata["default"]
        if setting.metadata["follows"]:
            return f"as `{setting.metadata['follows']}`"
        return "unset" if value == "" else f"`{str(value).lower() if isinstance(value, bool) else value}`"

    return "| setting | meaning | value | default |\n|---|---|---|---|\n" + "".join(
        f"| `{name}` | {setting.metadata['help']} | {setting.metadata['must'].removeprefix('must be ')} | "
        f"{shown(setting)} |\n"
        for name, setting in rows
    )


# --- Typed settings: parsed and checked once at start; services receive this object, never a dict. ---

RateLimits = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Account:
    """One account's own settings, WECHAT_<CODE>_* (AccountSchema)."""

    appid: str
    secret: str = field(repr=False)
    token: str = field(repr=False)
    aes_key: str = field(repr=False)
    mass_quota: tuple[int, str]  # (sends, "day" | "month")
    mass_protection: bool
    comments: bool = True  # the comment privilege: false sends need_open_comment 0 (docs/api.md §5)


# An account with no settings of its own: every WECHAT_<CODE>_* at its declared default (its quota 1/day).
UNCONFIGURED = _account(_load(ACCOUNT, {}))

EventKeys = Account  # what checks and opens an account's pushed events: its token and aes_key (docs/api.md §18)


def _of(name: str, **options: Any) -> Any:
    """This attribute is setting `name`, as parsed."""
    return field(metadata={"setting": name}, **options)


@dataclass(frozen=True)
class Settings:
    """Every setting the services read, typed. Built by `Settings.from_config` from the merged mapping."""

    # Of several settings (the others: one each, below):
    feedback_rate_limits: dict[str, RateLimits]  # ip, device, version, channel -> ((count, seconds), ...)
    wechat_preview_recipients: dict[str, tuple[str, ...]]  # account -> WeChat IDs offered on the page
    cover_ratio: tuple[float, float]
    team: TeamSettings  # who hears of tasks and feedback (docs/api.md §15)
    instance_path: str = _of("REVIEW_INSTANCE_PATH")
    uploads_path: str = _of("REVIEW_UPLOADS_PATH")
    database_url: str = _of("DATABASE_URL")
    wechat_api_base: str = _of("WECHAT_API_BASE")
    agent_tokens: tuple[str, ...] = _of("REVIEW_AGENT_TOKEN", repr=False)
    webhook_url: str = _of("REVIEW_AGENT_WEBHOOK_URL")
    webhook_secret: str = _of("REVIEW_AGENT_WEBHOOK_SECRET", repr=False)
    webhook_retry_delays: tuple[float, ...] = _of("REVIEW_WEBHOOK_RETRY_DELAYS")
    webhook_events: frozenset[str] = _of("REVIEW_AGENT_WEBHOOK_EVENTS")  # the outbox event types sent to the agent
    feedback_client_tokens: dict[str, str] = _of("FEEDBACK_CLIENT_TOKENS", repr=False)  # channel -> token
    feedback_anonymous_channels: frozenset[str] = _of("FEEDBACK_ANONYMOUS_CHANNELS")
    feedback_types: tuple[str, ...] = _of("FEEDBACK_TYPES")
    feedback_max_body_bytes: int = _of("FEEDBACK_MAX_BODY_BYTES")
    feedback_duplicate_window_seconds: int = _of("FEEDBACK_DUPLICATE_WINDOW_SECONDS")
    accounts: dict[str, str] = _of("WECHAT_ACCOUNTS")  # code -> the name people know it by, in the order configured
    wechat_accounts: dict[str, Account] = _of("ACCOUNTS")  # code -> its own settings
    publish_poll_delays: tuple[float, ...] = _of("WECHAT_PUBLISH_POLL_DELAYS")
    event_max_age: int = _of("WECHAT_EVENT_MAX_AGE")  # seconds, either way, between a push's timestamp and the clock
    stats_hour: int = _of("WECHAT_STATS_HOUR")
    stats_days: int = _of("WECHAT_STATS_DAYS")
    comments_minutes: int = _of("WECHAT_COMMENTS_MINUTES")
    comments_days: int = _of("WECHAT_COMMENTS_DAYS")
    comments_max: int = _of("WECHAT_COMMENTS_MAX")
    wechat_timeout_seconds: float = _of("WECHAT_TIMEOUT_SECONDS")
    wechat_upload_concurrency: int = _of("WECHAT_UPLOAD_CONCURRENCY")
    wechat_theme_overrides: dict[str, dict[str, str]] = _of("WECHAT_THEME_OVERRIDES")
    remote_image_hosts: tuple[str, ...] = _of("REVIEW_REMOTE_IMAGE_HOSTS")
    remote_image_allow_private: bool = _of("REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE")
    hash_method: str = _of("PASSWORD_HASH_METHOD")
    login_max_failures: int = _of("LOGIN_MAX_FAILURES")
    login_failure_window_seconds: int = _of("LOGIN_FAILURE_WINDOW_SECONDS")
    metrics_token: str = _of("METRICS_TOKEN", repr=False)
    presence_seconds: int = _of("REVIEW_PRESENCE_SECONDS")  # docs/api.md §15 Presence: how long a heartbeat counts
    default_language: str = _of("REVIEW_DEFAULT_LANGUAGE")  # of the admin pages: zh-CN or en
    time_zone: ZoneInfo = _of("REVIEW_TIME_ZONE")  # of the times in the pages' HTML
    # The instance's SECRET_KEY (create_app sets it once known): the key of the readers' pseudonyms (docs/api.md §23).
    secret_key: str = field(default="", repr=False)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Settings":
        """Check the merged settings (SettingsError names a bad one) and type them."""
        return cls.from_values(parse(config))

    @classmethod
    def from_values(cls, v: dict[str, Any]) -> "Settings":
        """From `parse`'s values."""
        recipients = v["WECHAT_PREVIEW_RECIPIENTS"]  # "" holds the IDs offered for every account (docs/api.md §12)
        return cls(
            **{f.name: v[f.metadata["setting"]] for f in fields(cls) if "setting" in f.metadata},
            feedback_rate_limits={
                "ip": v["FEEDBACK_RATE_LIMIT_PER_IP"],
                "device": v["FEEDBACK_RATE_LIMIT_PER_DEVICE"],
                "version": v["FEEDBACK_RATE_LIMIT_PER_VERSION"],
                "channel": v["FEEDBACK_RATE_LIMIT_PER_CHANNEL"],
            },
            wechat_preview_recipients={code: recipients.get(code, recipients.get("", ())) for code in v["ACCOUNTS"]},
            cover_ratio=(v["REVIEW_COVER_RATIO_MIN"], v["REVIEW_COVER_RATIO_MAX"]),
            team=team_settings(v),
        )

    @classmethod
    def with_defaults(cls, overrides: Mapping[str, Any] | None = None) -> "Settings":
        """The defaults with `overrides` (tests and one-off tools that build no app)."""
        return cls.from_config({**DEFAULTS, **(overrides or {})})

    @property
    def wechat_credentials(self) -> dict[str, Account]:
        """The accounts with both an AppID and its secret."""
        return {code: account for code, account in self.wechat_accounts.items() if account.appid and account.secret}

    def mass_quota(self, account: str) -> tuple[int, str]:
        """The account's (sends, "day" | "month") in REVIEW_TIME_ZONE (docs/api.md §21); an account not
        configured has WECHAT_<CODE>_MASS_QUOTA's declared default."""
        return self.wechat_accounts.get(account, UNCONFIGURED).mass_quota

    @property
    def mass_protected(self) -> frozenset[str]:
        """The accounts with 群发保护: an administrator confirms each send in WeChat."""
        return frozenset(code for code, account in self.wechat_accounts.items() if account.mass_protection)

    @property
    def comments_closed(self) -> frozenset[str]:
        """The accounts without the comment privilege (WECHAT_<CODE>_COMMENTS=false, docs/api.md §5)."""
        return frozenset(code for code, account in self.wechat_accounts.items() if not account.comments)

    @property
    def wechat_event_keys(self) -> dict[str, Account]:
        """The accounts with a server URL token (docs/api.md §18)."""
        return {code: account for code, account in self.wechat_accounts.items() if account.token}

    @property
    def temp_path(self) -> str:
        """Where task packages are built (inside the instance folder: same disk as the database)."""
        return os.path.join(self.instance_path, "tmp")

    def theme_overrides_for(self, account: str) -> dict[str, str] | None:
        """The account's theme CSS variables from WECHAT_THEME_OVERRIDES (config.py), or None."""
        return self.wechat_theme_overrides.get(account) or None
