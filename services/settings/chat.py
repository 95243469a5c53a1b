"""The team's chat apps (docs/api.md §22): a Feishu/Lark app and a WeCom app that send cards with the
decision buttons and hear the clicks. Each is on when its credentials are set."""
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

CHAT_DEFAULTS = {
    "FEISHU_APP_ID": "",  # a self-built app with the bot capability (open.feishu.cn → 开发者后台)
    "FEISHU_APP_SECRET": "",
    "FEISHU_VERIFICATION_TOKEN": "",  # 事件与回调 → 加密策略: Verification Token
    "FEISHU_ENCRYPT_KEY": "",  # … Encrypt Key (optional: unset, callbacks are plaintext)
    "FEISHU_CHAT_ID": "",  # the group the cards go to (oc_…); the app's bot must be in it
    "FEISHU_API_BASE": "https://open.feishu.cn",  # Lark: https://open.larksuite.com
    "WECOM_CORP_ID": "",  # 我的企业 → 企业ID
    "WECOM_AGENT_ID": "",  # the self-built app's AgentId
    "WECOM_SECRET": "",
    "WECOM_TOKEN": "",  # 接收消息 → API接收: Token
    "WECOM_AES_KEY": "",  # … EncodingAESKey (43 characters)
    "WECOM_TO_USERS": "",  # userid|userid, or @all
    "WECOM_API_BASE": "https://qyapi.weixin.qq.com",
}


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
        return tuple(name for name in ("feishu", "wecom") if getattr(self, name) is not None)


def _base(name: str, value: Any) -> str:
    text = str(value or "").rstrip("/")
    if urlsplit(text).scheme not in ("http", "https") or not urlsplit(text).hostname:
        raise ValueError(f"{name} must be an http:// or https:// address, not {text!r}")
    return text


def _all_or_none(config: Any, names: tuple[str, ...], label: str) -> bool:
    given = [name for name in names if str(config.get(name) or "")]
    if given and len(given) != len(names):
        missing = ", ".join(name for name in names if name not in given)
        raise ValueError(f"the {label} app needs {missing} too (or none of its settings)")
    return bool(given)


def chat_apps(config: Any) -> ChatApps:
    """ValueError naming a setting when an app is half configured or a value is malformed."""
    feishu = wecom = None
    if _all_or_none(config, ("FEISHU_APP_ID", "FEISHU_APP_SECRET", "FEISHU_VERIFICATION_TOKEN", "FEISHU_CHAT_ID"),
                    "Feishu"):
        feishu = FeishuApp(str(config["FEISHU_APP_ID"]), str(config["FEISHU_APP_SECRET"]),
                           str(config["FEISHU_VERIFICATION_TOKEN"]), str(config.get("FEISHU_ENCRYPT_KEY") or ""),
                           str(config["FEISHU_CHAT_ID"]), _base("FEISHU_API_BASE", config.get("FEISHU_API_BASE")))
    names = ("WECOM_CORP_ID", "WECOM_AGENT_ID", "WECOM_SECRET", "WECOM_TOKEN", "WECOM_AES_KEY", "WECOM_TO_USERS")
    if _all_or_none(config, names, "WeCom"):
        agent = str(config["WECOM_AGENT_ID"]).strip()
        if not agent.isdigit() or len(agent) > 12:
            raise ValueError(f"WECOM_AGENT_ID must be the app's AgentId (digits), not {agent!r}")
        if not re.fullmatch(r"[A-Za-z0-9+/]{43}", str(config["WECOM_AES_KEY"])):  # a secret: never quoted
            raise ValueError("WECOM_AES_KEY must be the 43 characters WeCom shows as EncodingAESKey")
        wecom = WeComApp(str(config["WECOM_CORP_ID"]), int(agent), str(config["WECOM_SECRET"]),
                         str(config["WECOM_TOKEN"]), str(config["WECOM_AES_KEY"]), str(config["WECOM_TO_USERS"]),
                         _base("WECOM_API_BASE", config.get("WECOM_API_BASE")))
    return ChatApps(feishu, wecom)
