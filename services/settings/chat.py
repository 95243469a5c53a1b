"""The team's chat apps (docs/api.md §22): a Feishu/Lark app and a WeCom app that send cards with the
decision buttons and hear the clicks, typed from the settings (declared in services/settings/declaration.py).
Each is on when its settings are set."""

from dataclasses import dataclass, field
from typing import Any

from rules.vocabulary import CHAT_PLATFORMS


@dataclass(frozen=True)
class FeishuApp:
    app_id: str
    app_secret: str = field(repr=False)
    verification_token: str = field(repr=False)
    encrypt_key: str = field(repr=False)
    chat_id: str
    api_base: str


@dataclass(frozen=True)
class WeComApp:
    corp_id: str
    agent_id: int
    secret: str = field(repr=False)
    token: str = field(repr=False)
    aes_key: str = field(repr=False)
    to_users: str
    api_base: str


@dataclass(frozen=True)
class ChatApps:
    feishu: FeishuApp | None = None
    wecom: WeComApp | None = None

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(name for name in CHAT_PLATFORMS if getattr(self, name) is not None)


def chat_apps(values: dict[str, Any]) -> ChatApps:
    """The apps of the parsed settings (the declaration refuses half an app)."""
    feishu = wecom = None
    if values["FEISHU_APP_ID"]:
        feishu = FeishuApp(
            values["FEISHU_APP_ID"],
            values["FEISHU_APP_SECRET"],
            values["FEISHU_VERIFICATION_TOKEN"],
            values["FEISHU_ENCRYPT_KEY"],
            values["FEISHU_CHAT_ID"],
            values["FEISHU_API_BASE"].rstrip("/"),
        )
    if values["WECOM_CORP_ID"]:
        wecom = WeComApp(
            values["WECOM_CORP_ID"],
            int(values["WECOM_AGENT_ID"]),
            values["WECOM_SECRET"],
            values["WECOM_TOKEN"],
            values["WECOM_AES_KEY"],
            values["WECOM_TO_USERS"],
            values["WECOM_API_BASE"].rstrip("/"),
        )
    return ChatApps(feishu, wecom)
