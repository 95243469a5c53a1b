"""The chat apps' APIs (docs/api.md §22): Feishu's tenant token, cards sent and redrawn; WeCom's token,
template cards sent and updated. Each call is one attempt within services.outbound's deadline; a token
is kept until shortly before it expires. Secrets never reach a log or an error."""

import json
import threading
import time
from typing import Any
from urllib.parse import urlencode

import requests

from rules.client_input import load_json
from services import outbound
from services.settings.chat import FeishuApp, WeComApp

ANSWER_MAX = 256 * 1024
TOKEN_MARGIN = 300  # seconds before its expiry a token is fetched again
_TOKENS: dict[tuple[str, str], tuple[str, float]] = {}
_LOCK = threading.Lock()


class ChatError(Exception):
    """A call that failed; str() is one line a person can act on (no secret in it)."""


def _call(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    sent = {"content-type": "application/json; charset=utf-8", **(headers or {})}
    where = url.split("?")[0]
    try:
        status, raw = outbound.post(url, data, sent, read_at_most=ANSWER_MAX, method=method)
    except requests.Timeout:
        raise ChatError(f"{where} timed out") from None
    except requests.RequestException as exc:
        raise ChatError(f"{where} is unreachable ({type(exc).__name__})") from None
    if len(raw) > ANSWER_MAX:
        raise ChatError(f"{where} answered HTTP {status} with more than {ANSWER_MAX // 1024} KiB")
    try:  # the strict reader of client input (docs/api.md §2): an outside answer is no safer
        answer = load_json(raw)
    except ValueError as exc:
        raise ChatError(f"{where} answered HTTP {status} with JSON that cannot be read ({exc})") from None
    if not isinstance(answer, dict):
        raise ChatError(f"{where} answered HTTP {status} without a JSON object")
    return answer


def _token_of(answer: dict[str, Any], key: str, expiry: str, where: str) -> tuple[str, float]:
    """(token, seconds it lasts) of a token answer; ChatError when it has no token or no readable expiry."""
    token, seconds = answer.get(key), answer.get(expiry) or 0
    if not isinstance(token, str) or not token or isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ChatError(f"{where} answered without a {key} and its {expiry}")
    return token, float(min(seconds, 10**9))  # a number past float's range would not convert


def forget_tokens() -> None:
    """An app built anew starts without the tokens of one built before in this process (its settings may
    name other apps, or an app at the same address that has never issued them)."""
    with _LOCK:
        _TOKENS.clear()


def _cached(key: tuple[str, str], fetch, stale: str | None = None) -> str:
    """The token under `key`, fetched when there is none, it is near its end, or it is `stale` (refused)."""
    with _LOCK:
        if stale is not None and _TOKENS.get(key, ("", 0.0))[0] == stale:
            del _TOKENS[key]
        token, until = _TOKENS.get(key, ("", 0.0))
        if token and time.time() < until:
            return token
        token, seconds = fetch()
        _TOKENS[key] = (token, time.time() + max(0, seconds - TOKEN_MARGIN))
        return token


def _feishu_checked(answer: dict[str, Any], what: str) -> dict[str, Any]:
    if answer.get("code") != 0:
        raise ChatError(f"Feishu {what} refused: code {answer.get('code')}: {str(answer.get('msg'))[:200]}")
    return answer


FEISHU_TOKEN_CODES = frozenset({99991661, 99991663, 99991668})
WECOM_TOKEN_CODES = frozenset({40014, 42001})


def _with_token(call, token, codes: frozenset[int], code_key: str) -> dict[str, Any]:
    """`call(token)`; once more with a fresh token when the platform refused that one."""
    first = token()
    answer = call(first)
    code = answer.get(code_key)
    if isinstance(code, int) and code in codes:  # an answer's code may be anything: a list is unhashable
        answer = call(token(stale=first))
    return answer


class Feishu:
    def __init__(self, app: FeishuApp):
        self.app = app

    def _token(self, stale: str | None = None) -> str:
        def fetch():
            url = f"{self.app.api_base}/open-apis/auth/v3/tenant_access_token/internal"
            credentials = {"app_id": self.app.app_id, "app_secret": self.app.app_secret}
            answer = _feishu_checked(_call("POST", url, credentials), "token")
            return _token_of(answer, "tenant_access_token", "expire", "Feishu token")

        return _cached(("feishu", self.app.api_base + self.app.app_id), fetch, stale)

    def _api(self, method: str, path: str, body: dict[str, Any], what: str) -> dict[str, Any]:
        """One call with the tenant token (fetched again once when refused); a refusal raises ChatError."""

        def call(token: str) -> dict[str, Any]:
            return _call(method, self.app.api_base + path, body, {"authorization": f"Bearer {token}"})

        return _feishu_checked(_with_token(call, self._token, FEISHU_TOKEN_CODES, "code"), what)

    def send(self, card: dict[str, Any]) -> str:
        """The card to the group -> its message_id."""
        body = {
            "receive_id": self.app.chat_id,
            "msg_type": "interactive",
            "content": json.dumps(card, ensure_ascii=False),
        }
        answer = self._api("POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", body, "send")
        data = answer.get("data")
        message_id = data.get("message_id") if isinstance(data, dict) else None
        if not isinstance(message_id, str) or not message_id:
            raise ChatError("Feishu send answered without a message_id")
        return str(message_id)

    def redraw(self, message_id: str, card: dict[str, Any]) -> None:
        body = {"content": json.dumps(card, ensure_ascii=False)}
        self._api("PATCH", f"/open-apis/im/v1/messages/{message_id}", body, "update")


class WeCom:
    def __init__(self, app: WeComApp):
        self.app = app

    def _token(self, stale: str | None = None) -> str:
        def fetch():
            query = urlencode({"corpid": self.app.corp_id, "corpsecret": self.app.secret})
            answer = _wecom_checked(_call("GET", f"{self.app.api_base}/cgi-bin/gettoken?{query}"), "gettoken")
            return _token_of(answer, "access_token", "expires_in", "WeCom gettoken")

        return _cached(("wecom", self.app.api_base + self.app.corp_id + str(self.app.agent_id)), fetch, stale)

    def _api(self, path: str, body: dict[str, Any], what: str) -> dict[str, Any]:
        """One POST with the access token (fetched again once when refused); a refusal raises ChatError."""

        def call(token: str) -> dict[str, Any]:
            return _call("POST", f"{self.app.api_base}{path}?access_token={token}", body)

        return _wecom_checked(_with_token(call, self._token, WECOM_TOKEN_CODES, "errcode"), what)

    def send(self, card: dict[str, Any]) -> str:
        """The template card to WECOM_TO_USERS -> its response_code (updates it once)."""
        body = {
            "touser": self.app.to_users,
            "msgtype": "template_card",
            "agentid": self.app.agent_id,
            "template_card": card,
        }
        code = self._api("/cgi-bin/message/send", body, "send").get("response_code")
        return code if isinstance(code, str) else ""

    def update(self, response_code: str, replace_name: str) -> None:
        """The card's buttons become one grey line: what was decided."""
        audience: dict[str, Any] = (
            {"atall": 1} if self.app.to_users == "@all" else {"userids": self.app.to_users.split("|")}
        )
        body = {
            **audience,
            "agentid": self.app.agent_id,
            "response_code": response_code,
            "button": {"replace_name": replace_name[:20]},
        }
        self._api("/cgi-bin/message/update_template_card", body, "update_template_card")


def _wecom_checked(answer: dict[str, Any], what: str) -> dict[str, Any]:
    if answer.get("errcode") != 0:
        raise ChatError(f"WeCom {what} refused: errcode {answer.get('errcode')}: {str(answer.get('errmsg'))[:200]}")
    return answer
