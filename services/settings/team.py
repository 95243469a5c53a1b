"""Team notification settings (docs/api.md §15): their defaults, and how they read, checked once at start.

services/settings/__init__.py merges TEAM_DEFAULTS into its DEFAULTS and keeps `team_settings(config)` as
`Settings.team`. Webhook URLs carry the robot's key (WeCom `key=`, DingTalk `access_token=`, Feishu's
hook id), so like the secrets they are never quoted in a message or a log line.
"""
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rules import accounts
from rules.vocabulary import DEFAULT_ACCOUNTS, TEAM_CHANNELS, TEAM_EVENTS
from services.settings.chat import CHAT_DEFAULTS, ChatApps, chat_apps
from services.settings.values import split_list

TEAM_DEFAULTS = {
    **CHAT_DEFAULTS,  # the chat apps' cards (docs/api.md §22), in services/settings/chat.py
    "NOTIFY_WECOM_WEBHOOK_URL": "",  # WeCom group robot: https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…
    "NOTIFY_FEISHU_WEBHOOK_URL": "",  # Feishu custom bot: https://open.feishu.cn/open-apis/bot/v2/hook/…
    "NOTIFY_FEISHU_SECRET": "",  # the bot's signature secret (unset: messages are not signed)
    "NOTIFY_DINGTALK_WEBHOOK_URL": "",  # DingTalk custom robot: https://oapi.dingtalk.com/robot/send?access_token=…
    "NOTIFY_DINGTALK_SECRET": "",  # the robot's signing secret, SEC… (unset: not signed)
    "NOTIFY_EMAIL_TO": "",  # comma-separated addresses, sent through SMTP_HOST
    "SMTP_HOST": "",
    "SMTP_PORT": 587,
    "SMTP_USER": "",  # unset: no login
    "SMTP_PASSWORD": "",
    "SMTP_STARTTLS": True,  # upgrade the connection before the login (certificate checked)
    "SMTP_FROM": "",  # unset: SMTP_USER
    "NOTIFY_EVENTS": ",".join(TEAM_EVENTS),  # which events are told
    "REVIEW_PUBLIC_URL": "",  # e.g. https://review.example.com: links in messages are absolute; unset: paths
}
_ROBOTS = {"wecom": ("NOTIFY_WECOM_WEBHOOK_URL", None),
           "feishu": ("NOTIFY_FEISHU_WEBHOOK_URL", "NOTIFY_FEISHU_SECRET"),
           "dingtalk": ("NOTIFY_DINGTALK_WEBHOOK_URL", "NOTIFY_DINGTALK_SECRET")}


_SHORT_EVENTS = {"live": "task.live", "live_failed": "task.live_failed"}


@dataclass(frozen=True)
class Robot:
    url: str = field(repr=False)
    secret: str = field(repr=False)


@dataclass(frozen=True)
class Smtp:
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    starttls: bool
    sender: str
    recipients: tuple[str, ...]


@dataclass(frozen=True)
class TeamSettings:
    robots: dict[str, Robot]  # channel (wecom, feishu, dingtalk) -> robot; an unset one is absent
    smtp: Smtp | None  # None: no e-mail
    events: frozenset[str]
    public_url: str  # without a trailing slash; "" when unset
    accounts: dict[str, str] = field(default_factory=dict)  # code -> name (WECHAT_ACCOUNTS, docs/api.md §18)
    chat: ChatApps = field(default_factory=ChatApps)  # the chat apps that send decision cards (docs/api.md §22)

    def account_name(self, code: str) -> str:
        return self.accounts.get(code, code)

    @property
    def channels(self) -> tuple[str, ...]:
        """The configured channels, in TEAM_CHANNELS order."""
        return tuple(c for c in TEAM_CHANNELS if c in self.robots or (c == "email" and self.smtp))


def _web_address(name: str, value: str, quote: bool) -> str:
    parts = urlsplit(value)
    if value and (parts.scheme not in ("http", "https") or not parts.hostname):
        shown = f", not {value!r}" if quote else " (the value is not shown: it holds the robot's key)"
        raise ValueError(f"{name} must be an http:// or https:// address{shown}")
    return value


def _smtp(config: Any) -> Smtp | None:
    recipients = tuple(split_list(config.get("NOTIFY_EMAIL_TO")))
    if not recipients:
        return None
    if bad := [address for address in recipients if "@" not in address or any(c.isspace() for c in address)]:
        raise ValueError(f"NOTIFY_EMAIL_TO must be e-mail addresses separated by commas; not one: {bad[0]!r}")
    host, port = str(config.get("SMTP_HOST") or "").strip(), config.get("SMTP_PORT")
    if not host:
        raise ValueError("NOTIFY_EMAIL_TO is set but SMTP_HOST is not: name the mail server to send through")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"SMTP_PORT must be 1 to 65535, not {port!r}")
    user = str(config.get("SMTP_USER") or "")
    sender = str(config.get("SMTP_FROM") or user)
    if "@" not in sender:
        raise ValueError("SMTP_FROM (or SMTP_USER) must be the sender's e-mail address when NOTIFY_EMAIL_TO is set")
    return Smtp(host, port, user, str(config.get("SMTP_PASSWORD") or ""), bool(config.get("SMTP_STARTTLS")),
                sender, recipients)


def team_settings(config: Any) -> TeamSettings:
    """The typed team settings; ValueError naming the setting when one cannot work."""
    robots = {}
    for channel, (url_name, secret_name) in _ROBOTS.items():
        url = _web_address(url_name, str(config.get(url_name) or "").strip(), quote=False)
        if url:
            robots[channel] = Robot(url, str(config.get(secret_name) or "") if secret_name else "")
    # empty: the default, all; `live` and `live_failed` (docs/api.md §18's short names) read as task.live…
    events = [_SHORT_EVENTS.get(name, name) for name in split_list(config.get("NOTIFY_EVENTS"))] or list(TEAM_EVENTS)
    if unknown := sorted(set(events) - set(TEAM_EVENTS)):
        raise ValueError(f"NOTIFY_EVENTS names unknown events {', '.join(unknown)}; known: {', '.join(TEAM_EVENTS)}")
    public_url = _web_address("REVIEW_PUBLIC_URL", str(config.get("REVIEW_PUBLIC_URL") or "").strip(), quote=True)
    try:
        named = accounts.parse(config.get("WECHAT_ACCOUNTS") or ",".join(DEFAULT_ACCOUNTS))
    except ValueError:
        named = {}  # the start stops naming WECHAT_ACCOUNTS (services.settings.checks)
    return TeamSettings(robots, _smtp(config), frozenset(events), public_url.rstrip("/"), named, chat_apps(config))
