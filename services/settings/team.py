"""Who hears of tasks (docs/api.md §15): the team's robots and e-mail, typed from the settings
(declared in services/settings/declaration.py). Webhook URLs carry the robot's key (WeCom `key=`,
DingTalk `access_token=`, Feishu's hook id), so like the secrets they are never shown."""

from dataclasses import dataclass, field
from typing import Any

from rules.vocabulary import TEAM_CHANNELS
from services.settings.chat import ChatApps, chat_apps

_ROBOTS = {
    "wecom": ("NOTIFY_WECOM_WEBHOOK_URL", ""),
    "feishu": ("NOTIFY_FEISHU_WEBHOOK_URL", "NOTIFY_FEISHU_SECRET"),
    "dingtalk": ("NOTIFY_DINGTALK_WEBHOOK_URL", "NOTIFY_DINGTALK_SECRET"),
}


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


def team_settings(values: dict[str, Any]) -> TeamSettings:
    """The team's part of the parsed settings (services.settings.parse)."""
    robots = {
        channel: Robot(values[url].strip(), values[secret] if secret else "")
        for channel, (url, secret) in _ROBOTS.items()
        if values[url].strip()
    }
    smtp = Smtp(
        values["SMTP_HOST"].strip(),
        values["SMTP_PORT"],
        values["SMTP_USER"],
        values["SMTP_PASSWORD"],
        values["SMTP_STARTTLS"],
        values["SMTP_FROM"] or values["SMTP_USER"],
        values["NOTIFY_EMAIL_TO"],
    )
    return TeamSettings(
        robots,
        smtp if smtp.recipients else None,
        values["NOTIFY_EVENTS"],
        values["REVIEW_PUBLIC_URL"].strip().rstrip("/"),
        values["WECHAT_ACCOUNTS"],
        chat_apps(values),
    )
