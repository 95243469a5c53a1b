"""Fake Feishu/Lark and WeCom self-built apps (approving from the team's chat), over real HTTP on 127.0.0.1.

Feishu (open.feishu.cn): `POST /open-apis/auth/v3/tenant_access_token/internal`, `POST /open-apis/im/v1/messages`
(an interactive card into a chat) and `PATCH /open-apis/im/v1/messages/<message_id>` (the card updated), with the
platform's `code`/`msg` answers: HTTP 200 and code 0 on success; a token request with an unknown app_id
answers HTTP 200 code 10003, a wrong secret code 10014 (HTTP 400); the IM API refuses a request without
`Authorization: Bearer …` with HTTP 400 code 99991661 and an unknown or expired token with HTTP 400 code 99991663.
A click is the `card.action.trigger` callback (schema 2.0) POSTed to the card request URL: plaintext JSON, or with
an Encrypt Key `{"encrypt": base64(iv + AES-256-CBC(key=SHA-256(encrypt key), PKCS#7))}` and
`X-Lark-Signature` = hex SHA-256(timestamp + nonce + encrypt key + raw body). The platform waits 3 s for the
answer; an answer `{"card": {"type": "raw", "data": …}}` replaces the card, as the chat does.

WeCom (qyapi.weixin.qq.com): `GET /cgi-bin/gettoken`, `POST /cgi-bin/message/send` (a template card) and
`POST /cgi-bin/message/update_template_card`, with `errcode`/`errmsg` answers (HTTP 200 always). Every send of
a card that calls back returns a `response_code`, and every click carries a new one; each is good for one
update within 72 hours. A click is the `template_card_event` POSTed to the app's callback URL the
WXBizMsgCrypt way: an XML envelope whose `Encrypt` is the Official Account's safe-mode AES with the corp id
as the trailing id, `msg_signature` = SHA-1 of the sorted token, timestamp, nonce and Encrypt. WeCom waits 5 s.

One server serves both platforms' paths. The fake imports nothing of the service. `describe_card` prints
either platform's card as text (the demo).
"""

import base64
import hashlib
import json
import os
import re
import secrets
import threading
import time
from typing import Any

import requests
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from flask import Flask, Response, request
from werkzeug.serving import WSGIRequestHandler

from fakeplatform.freepublish import encrypt as wecom_encrypt
from fakeplatform.freepublish import sha1_sorted
from fakeplatform.threaded import Served

TOKEN_TTL = 7200
FEISHU_TOKEN_RENEW = 1800  # a token request with less than 30 min left gets a new token (the old one stays good)
RESPONSE_CODE_TTL = 72 * 3600
FEISHU_CALLBACK_WAIT = 3  # seconds the platform waits for the card request URL's answer
WECOM_CALLBACK_WAIT = 5
_SECRET_PARAM = re.compile(r"((?:access_token|corpsecret)=)[^&\s]+")

FEISHU_ERRORS = {
    "app_id": (200, 10003, "invalid param"),
    "app_secret": (400, 10014, "app secret invalid"),
    "no_token": (400, 99991661, "Missing access token for authorization. Please make a request with token attached."),
    "bad_token": (400, 99991663, "Invalid access token for authorization. Please make a request with token attached."),
    "field": (400, 99992402, "field validation failed"),
    "param": (400, 230001, "Your request contains an invalid request parameter."),
    "out_of_chat": (400, 230002, "Bot/User can NOT be out of the chat."),
    "card": (400, 230099, "Failed to create card content, ext=ErrCode: 200621; ErrMsg: parse card json err"),
}
WECOM_ERRORS = {
    "corpid_missing": (41002, "corpid missing"),
    "secret_missing": (41004, "corpsecret missing"),
    "corpid": (40013, "invalid corpid"),
    "secret": (40001, "invalid credential"),
    "token_missing": (41001, "access_token missing"),
    "token": (40014, "invalid access_token"),
    "token_expired": (42001, "access_token expired"),
    "json": (47001, "data format error"),
    "agentid": (40056, "invalid agentid"),
    "msgtype": (40008, "invalid message type"),
    "task_id": (42014, "taskid has existed or empty or exceed max len"),
    "users": (81013, "user & party & tag all invalid"),
    # Not found in the public documents: the code of a response_code unknown, used or past 72 h (assumed).
    "response_code": (40058, "invalid response_code"),
}


class _QuietHandler(WSGIRequestHandler):
    """Request log lines with access tokens and secrets masked."""

    def log(self, type, message, *args):
        super().log(type, "%s", _SECRET_PARAM.sub(r"\1***", message % args if args else message))


# ---- Feishu's callback crypto (what a test checks by the documented formulas) ---------------------------------
def feishu_encrypt(encrypt_key: str, plain: bytes, iv: bytes | None = None) -> str:
    """base64(iv + AES-256-CBC(key = SHA-256(encrypt key), iv, PKCS#7 padding)) of `plain`."""
    iv = iv or os.urandom(16)
    padder = padding.PKCS7(128).padder()
    data = padder.update(plain) + padder.finalize()
    encryptor = Cipher(algorithms.AES(hashlib.sha256(encrypt_key.encode()).digest()), modes.CBC(iv)).encryptor()
    return base64.b64encode(iv + encryptor.update(data) + encryptor.finalize()).decode()


def feishu_signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """`X-Lark-Signature`: hex SHA-256 of timestamp + nonce + encrypt key + the raw body."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def feishu_request(
    payload: dict, encrypt_key: str = "", timestamp: str | None = None, nonce: str | None = None
) -> tuple[bytes, dict[str, str]]:
    """(raw body, headers) of a push to a card request URL: encrypted and signed when there is a key."""
    timestamp = timestamp or str(int(time.time()))
    nonce = nonce or secrets.token_hex(8)
    plain = json.dumps(payload, ensure_ascii=False).encode()
    body = json.dumps({"encrypt": feishu_encrypt(encrypt_key, plain)}).encode() if encrypt_key else plain
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "User-Agent": "Go-http-client/1.1",
    }
    if encrypt_key:
        headers["X-Lark-Signature"] = feishu_signature(timestamp, nonce, encrypt_key, body)
    return body, headers


def post_feishu(
    url: str, body: bytes, headers: dict[str, str], timeout: float = FEISHU_CALLBACK_WAIT
) -> tuple[int | None, Any]:
    """POST a push; (HTTP status, the answer's JSON or text). (None, "timeout") past the platform's wait."""
    try:
        response = requests.post(url, data=body, headers=headers, timeout=timeout)
    except requests.Timeout:
        return None, "timeout"
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


# ---- WeCom's callback (WXBizMsgCrypt) -------------------------------------------------------------------------
def _cdata(value: Any) -> str:
    return f"<![CDATA[{value}]]>"


def wecom_event_xml(
    corp_id: str,
    userid: str,
    key: str,
    task_id: str,
    response_code: str,
    agent_id: Any,
    card_type: str = "button_interaction",
    create_time: int | None = None,
) -> bytes:
    """The plaintext `template_card_event` of a button click."""
    return (
        f"<xml><ToUserName>{_cdata(corp_id)}</ToUserName><FromUserName>{_cdata(userid)}</FromUserName>"
        f"<CreateTime>{create_time or int(time.time())}</CreateTime><MsgType>{_cdata('event')}</MsgType>"
        f"<Event>{_cdata('template_card_event')}</Event><EventKey>{_cdata(key)}</EventKey>"
        f"<TaskId>{_cdata(task_id)}</TaskId><CardType>{_cdata(card_type)}</CardType>"
        f"<ResponseCode>{_cdata(response_code)}</ResponseCode><AgentID>{agent_id}</AgentID></xml>"
    ).encode()


def wecom_request(
    xml: bytes,
    token: str,
    aes_key: str,
    corp_id: str,
    agent_id: Any,
    timestamp: str | None = None,
    nonce: str | None = None,
) -> tuple[dict[str, str], bytes]:
    """(query, body) of a push to the app's callback URL: the XML encrypted, the envelope signed."""
    timestamp = timestamp or str(int(time.time()))
    nonce = nonce or str(secrets.randbelow(10**10))
    encrypted = wecom_encrypt(aes_key, xml, corp_id)
    query = {"msg_signature": sha1_sorted(token, timestamp, nonce, encrypted), "timestamp": timestamp, "nonce": nonce}
    body = (
        f"<xml><ToUserName>{_cdata(corp_id)}</ToUserName><AgentID>{_cdata(agent_id)}</AgentID>"
        f"<Encrypt>{_cdata(encrypted)}</Encrypt></xml>"
    ).encode()
    return query, body


# ---- a card as text (the demo) --------------------------------------------------------------------------------
def _text_of(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, dict):
        return str(node.get("content") or node.get("text") or "")
    return ""


def _feishu_lines(elements: list, lines: list[str], buttons: list[str]) -> None:
    for element in elements or []:
        if not isinstance(element, dict):
            continue
        tag = element.get("tag")
        if tag == "button":
            behaviors = element.get("behaviors") or []
            target = next(
                (
                    f" -> {b.get('default_url') or b.get('url')}"
                    for b in behaviors
                    if isinstance(b, dict) and b.get("type") == "open_url"
                ),
                "",
            )
            value = next(
                (b.get("value") for b in behaviors if isinstance(b, dict) and b.get("type") == "callback"),
                element.get("value"),
            )
            callback = f" -> callback {json.dumps(value, ensure_ascii=False)}" if value is not None else ""
            target = target or (f" -> {element['url']}" if element.get("url") else "")
            buttons.append(f"[{_text_of(element.get('text'))}]{target}{callback}")
        elif tag in ("markdown", "plain_text", "lark_md"):
            lines.append(str(element.get("content", "")))
        elif tag == "div":
            lines.append(_text_of(element.get("text")))
            for field in element.get("fields") or []:
                lines.append(_text_of(field.get("text") if isinstance(field, dict) else field))
        elif tag == "input":
            label = _text_of(element.get("label")) or _text_of(element.get("placeholder"))
            lines.append(f"<input {element.get('name', '')}: {label}>")
        elif tag == "hr":
            lines.append("---")
        elif tag == "column_set":
            for column in element.get("columns") or []:
                _feishu_lines(column.get("elements") or [], lines, buttons)
        elif tag in ("form", "collapsible_panel", "interactive_container"):
            _feishu_lines(element.get("elements") or [], lines, buttons)
        elif tag == "action":
            _feishu_lines(element.get("actions") or [], lines, buttons)
        elif tag == "note":
            lines += [_text_of(e) for e in element.get("elements") or []]


def _describe_feishu(card: dict) -> list[str]:
    header = card.get("header") or {}
    out = [f"# {_text_of(header.get('title'))}"] if header.get("title") else []
    if header.get("subtitle"):
        out.append(_text_of(header.get("subtitle")))
    lines: list[str] = []
    buttons: list[str] = []
    body = card.get("body") if isinstance(card.get("body"), dict) else {}
    _feishu_lines((body or {}).get("elements") or card.get("elements") or [], lines, buttons)
    out += [line for line in lines if line]
    if buttons:
        out.append(" ".join(buttons))
    link = card.get("card_link") or {}
    if isinstance(link, dict) and link.get("url"):
        out.append(f"(card opens {link['url']})")
    return out


def _describe_wecom(card: dict) -> list[str]:
    main = card.get("main_title") or {}
    out = [f"# {main.get('title', '')}"] if main.get("title") else []
    if main.get("desc"):
        out.append(str(main["desc"]))
    if card.get("sub_title_text"):
        out.append(str(card["sub_title_text"]))
    for item in card.get("horizontal_content_list") or []:
        out.append(f"{item.get('keyname', '')}: {item.get('value', '')}")
    replaced = card.get("replace_text")
    buttons = [
        f"[{b.get('text', '')}] -> key {b.get('key', '')}"
        if b.get("type", 0) == 0
        else f"[{b.get('text', '')}] -> {b.get('url', '')}"
        for b in card.get("button_list") or []
    ]
    if replaced:
        out.append(f"[{replaced}] (done, no buttons)")
    elif buttons:
        out.append(" ".join(buttons))
    action = card.get("card_action") or {}
    if action.get("url"):
        out.append(f"(card opens {action['url']})")
    return out


def describe_card(card: dict) -> str:
    """A card as text: title, lines, buttons. A Feishu card (JSON 2.0, or 1.0) or a WeCom template card."""
    if not isinstance(card, dict):
        return str(card)
    lines = _describe_wecom(card) if "card_type" in card else _describe_feishu(card)
    return "\n".join(lines)


# ---- the fake --------------------------------------------------------------------------------------------------
class _Refusal(Exception):
    def __init__(self, payload: dict, status: int = 200):
        super().__init__(payload)
        self.payload, self.status = payload, status


def _feishu_refusal(kind: str, detail: str = "") -> _Refusal:
    status, code, msg = FEISHU_ERRORS[kind]
    return _Refusal(
        {
            "code": code,
            "msg": msg + (f" {detail}" if detail else ""),
            "error": {"log_id": secrets.token_hex(16).upper()},
        },
        status,
    )


def _wecom_refusal(kind: str) -> _Refusal:
    errcode, errmsg = WECOM_ERRORS[kind]
    hint = (
        f", hint: [{int(time.time())}{secrets.token_hex(6)}], from ip: 127.0.0.1, more info at "
        f"https://open.work.weixin.qq.com/devtool/query?e={errcode}"
    )
    return _Refusal({"errcode": errcode, "errmsg": errmsg + hint})


class FakeChatApps:
    """A Feishu self-built app (app_id/app_secret) and a WeCom self-built app (corp_id/corp_secret/agent_id)."""

    def __init__(
        self,
        app_id: str = "cli_fake0123456789",
        app_secret: str = "feishu-app-secret",  # noqa: S107 - a fake's credentials
        corp_id: str = "wwfake0123456789",
        corp_secret: str = "wecom-corp-secret",  # noqa: S107
        agent_id: int = 1000002,
        tenant_key: str = "fake-tenant",
    ):
        self.app_id, self.app_secret, self.tenant_key = app_id, app_secret, tenant_key
        self.corp_id, self.corp_secret, self.agent_id = corp_id, corp_secret, int(agent_id)
        self.requests: list[dict] = []  # every API request received, oldest first
        self.feishu_cards: dict[str, dict] = {}  # message_id -> {"chat_id", "msg_type", "card", "updates": [...]}
        self.feishu_messages: list[str] = []  # message ids in the order sent
        self.feishu_chats: set[str] | None = None  # chats the bot is in (None: any); else 230002
        self.wecom_cards: dict[str, dict] = {}  # task_id -> {"touser", "card", "msgid", "response_code", "updates"}
        self.wecom_users: set[str] | None = None  # the corp's userids (None: any); others come back in invaliduser
        self.callbacks: list[dict] = []  # each push: {"platform", "kind", "url", "status", "answer", ...}
        self._tokens: dict[str, dict] = {}  # token -> {"platform", "expires_at"}
        self._current: dict[str, str] = {}  # platform -> its latest token
        self._response_codes: dict[str, dict] = {}  # response_code -> {"task_id", "expires_at", "used"}
        self._scripted: list[dict] = []  # fail_next
        self._lock = threading.RLock()
        self._seq = 0
        self._served: Served | None = None
        self.base_url: str | None = None
        self.app = self._build_app()

    # ---- control ---------------------------------------------------------------------------------------------
    def fail_next(self, path_suffix: str, payload: dict | bytes, status: int = 200, times: int = 1) -> None:
        """The next `times` requests whose path ends with path_suffix are answered with payload (and status);
        bytes are sent as they are (an answer json.dumps would never write)."""
        with self._lock:
            self._scripted.append({"suffix": path_suffix, "payload": payload, "status": status, "remaining": times})

    def expire_tokens(self) -> None:
        """Every token issued so far expires now (Feishu then answers 99991663, WeCom 42001)."""
        with self._lock:
            for info in self._tokens.values():
                info["expires_at"] = 0

    def expire_response_codes(self) -> None:
        """Every response_code issued so far is past its 72 hours."""
        with self._lock:
            for info in self._response_codes.values():
                info["expires_at"] = 0

    def requests_to(self, path_suffix: str) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith(path_suffix)]

    def feishu_card(self, message_id: str) -> dict:
        """The card as the chat shows it now: the last update, else the card sent."""
        record = self.feishu_cards[message_id]
        return record["updates"][-1] if record["updates"] else record["card"]

    def wecom_card(self, task_id: str) -> dict:
        """The card as the chat shows it now: the last whole-card update, with a button update's replace_text."""
        record = self.wecom_cards[task_id]
        card = dict(record["card"])
        for update in record["updates"]:
            if isinstance(update.get("template_card"), dict):
                card = dict(update["template_card"])
            elif isinstance(update.get("button"), dict):
                card["replace_text"] = update["button"].get("replace_name", "")
        return card

    # ---- lifecycle ---------------------------------------------------------------------------------------------
    def start(self, port: int = 0, host: str = "127.0.0.1") -> str:
        """Serve in a daemon thread; returns the base URL (both platforms' paths are under it)."""
        self._served = Served(self.app, host, port, handler=_QuietHandler, name="fake-chat-apps")
        self.base_url = self._served.url
        return self.base_url

    def stop(self) -> None:
        if self._served is not None:
            self._served.stop()
            self._served = None

    # ---- Feishu: the platform's side of a click ------------------------------------------------------------------
    def feishu_callback_body(
        self,
        message_id: str,
        value: Any,
        open_id: str,
        verification_token: str,
        form_value: dict | None = None,
        chat_id: str | None = None,
    ) -> dict:
        """The plaintext `card.action.trigger` callback (schema 2.0) of a button click on the card."""
        record = self.feishu_cards.get(message_id) or {}
        action: dict[str, Any] = {"value": value, "tag": "button"}
        if form_value is not None:  # a form's submit button: its name and the form's fields
            action.update(name="submit", form_value=form_value)
        return {
            "schema": "2.0",
            "header": {
                "event_id": secrets.token_hex(16),
                "token": verification_token,
                "create_time": str(int(time.time() * 1000)),
                "event_type": "card.action.trigger",
                "tenant_key": self.tenant_key,
                "app_id": self.app_id,
            },
            "event": {
                "operator": {
                    "tenant_key": self.tenant_key,
                    "user_id": open_id.replace("ou_", "", 1),
                    "open_id": open_id,
                    "union_id": "on_"
                    + hashlib.md5(  # noqa: S324
                        open_id.encode()
                    ).hexdigest(),
                },
                "token": "c-" + secrets.token_hex(20),
                "action": action,
                "host": "im_message",
                "context": {"open_message_id": message_id, "open_chat_id": chat_id or record.get("chat_id", "")},
            },
        }

    def click_feishu(
        self,
        message_id: str,
        value: Any,
        open_id: str,
        url: str,
        verification_token: str,
        encrypt_key: str = "",
        form_value: dict | None = None,
        timestamp: str | None = None,
        nonce: str | None = None,
        tamper: str | None = None,
        timeout: float = FEISHU_CALLBACK_WAIT,
    ) -> tuple[int | None, Any]:
        """A click on a button whose callback value is `value`: the callback POSTed to `url` as the platform
        does. tamper: "signature" (a wrong X-Lark-Signature), "token" (a wrong verification token), "unsigned"
        (no signature header). An answer with `card.type == "raw"` replaces the card (appended to its updates).
        Returns (HTTP status or None past the 3 s the platform waits, the answer's JSON or text)."""
        token = verification_token + "-forged" if tamper == "token" else verification_token
        payload = self.feishu_callback_body(message_id, value, open_id, token, form_value)
        body, headers = feishu_request(payload, encrypt_key, timestamp, nonce)
        if tamper == "signature":
            headers["X-Lark-Signature"] = feishu_signature(
                headers["X-Lark-Request-Timestamp"], "forged", encrypt_key, body
            )
        elif tamper == "unsigned":
            headers.pop("X-Lark-Signature", None)
        status, answer = post_feishu(url, body, headers, timeout)
        with self._lock:
            self.callbacks.append(
                {
                    "platform": "feishu",
                    "kind": "card.action.trigger",
                    "url": url,
                    "message_id": message_id,
                    "payload": payload,
                    "status": status,
                    "answer": answer,
                }
            )
            card = answer.get("card") if status == 200 and isinstance(answer, dict) else None
            if (
                isinstance(card, dict)
                and card.get("type") == "raw"
                and isinstance(card.get("data"), dict)
                and message_id in self.feishu_cards
            ):
                self.feishu_cards[message_id]["updates"].append(card["data"])
        return status, answer

    def verify_feishu_url(
        self, url: str, verification_token: str, encrypt_key: str = "", timeout: float = FEISHU_CALLBACK_WAIT
    ) -> tuple[int | None, Any, str]:
        """The request URL check the developer console makes when the URL is saved: `url_verification`
        (encrypted and signed when there is a key). Returns (status, answer, the challenge it should echo)."""
        challenge = secrets.token_hex(8) + "-" + secrets.token_hex(4)
        payload = {"challenge": challenge, "token": verification_token, "type": "url_verification"}
        body, headers = feishu_request(payload, encrypt_key)
        status, answer = post_feishu(url, body, headers, timeout)
        with self._lock:
            self.callbacks.append(
                {
                    "platform": "feishu",
                    "kind": "url_verification",
                    "url": url,
                    "payload": payload,
                    "status": status,
                    "answer": answer,
                }
            )
        return status, answer, challenge

    # ---- WeCom: the platform's side of a click ----------------------------------------------------------------
    def click_wecom(
        self,
        task_id: str,
        key: str,
        userid: str,
        url: str,
        token: str,
        aes_key: str,
        corp_id: str | None = None,
        timestamp: str | None = None,
        nonce: str | None = None,
        timeout: float = WECOM_CALLBACK_WAIT,
    ) -> tuple[int | None, str]:
        """A click by `userid` on the button `key` of the card `task_id`: the `template_card_event` POSTed to
        `url` (?msg_signature&timestamp&nonce) the WXBizMsgCrypt way. The event carries a new response_code
        (usable once, 72 h), also kept in the card's `response_codes`. Returns (status or None past 5 s, text)."""
        corp_id = corp_id or self.corp_id
        with self._lock:
            record = self.wecom_cards.get(task_id)
            response_code = self._new_response_code(task_id)
            if record is not None:
                record["response_codes"].append(response_code)
            card_type = (record or {}).get("card", {}).get("card_type", "button_interaction")
        xml = wecom_event_xml(corp_id, userid, key, task_id, response_code, self.agent_id, card_type)
        query, body = wecom_request(xml, token, aes_key, corp_id, self.agent_id, timestamp, nonce)
        try:
            response = requests.post(
                url, params=query, data=body, headers={"Content-Type": "text/xml"}, timeout=timeout
            )
            status, text = response.status_code, response.text
        except requests.Timeout:
            status, text = None, "timeout"
        with self._lock:
            self.callbacks.append(
                {
                    "platform": "wecom",
                    "kind": "template_card_event",
                    "url": url,
                    "task_id": task_id,
                    "key": key,
                    "userid": userid,
                    "response_code": response_code,
                    "xml": xml,
                    "status": status,
                    "answer": text,
                }
            )
        return status, text

    def verify_wecom_url(
        self, url: str, token: str, aes_key: str, corp_id: str | None = None, timeout: float = WECOM_CALLBACK_WAIT
    ) -> tuple[int | None, str, str]:
        """The callback URL check the admin console makes: GET with msg_signature, timestamp, nonce and an
        encrypted echostr. Returns (status, the answer's text, the plain echostr it should be)."""
        corp_id = corp_id or self.corp_id
        plain = str(secrets.randbelow(10**19))
        echostr = wecom_encrypt(aes_key, plain.encode(), corp_id)
        timestamp, nonce = str(int(time.time())), str(secrets.randbelow(10**10))
        query = {
            "msg_signature": sha1_sorted(token, timestamp, nonce, echostr),
            "timestamp": timestamp,
            "nonce": nonce,
            "echostr": echostr,
        }
        try:
            response = requests.get(url, params=query, timeout=timeout)
            status, text = response.status_code, response.text
        except requests.Timeout:
            status, text = None, "timeout"
        with self._lock:
            self.callbacks.append(
                {
                    "platform": "wecom",
                    "kind": "url_verification",
                    "url": url,
                    "status": status,
                    "answer": text,
                    "echostr": plain,
                }
            )
        return status, text, plain

    # ---- state helpers (with the lock held) -----------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        self._seq += 1
        return f"{prefix}{self._seq:04d}{secrets.token_hex(12)}"

    def _issue_token(self, platform: str, prefix: str) -> tuple[str, int]:
        """The platform's current token while enough of it is left (Feishu: 30 min; WeCom: any), else a new one."""
        now = time.time()
        token = self._current.get(platform, "")
        info = self._tokens.get(token)
        floor = FEISHU_TOKEN_RENEW if platform == "feishu" else 0
        if info is None or info["expires_at"] - now <= floor:
            token = prefix + secrets.token_hex(20)
            info = self._tokens[token] = {"platform": platform, "expires_at": now + TOKEN_TTL}
            self._current[platform] = token
        return token, max(0, round(info["expires_at"] - now))

    def _token_ok(self, platform: str, token: str | None) -> bool:
        info = self._tokens.get(token or "")
        return info is not None and info["platform"] == platform and info["expires_at"] > time.time()

    def _new_response_code(self, task_id: str) -> str:
        code = secrets.token_urlsafe(36)
        self._response_codes[code] = {"task_id": task_id, "expires_at": time.time() + RESPONSE_CODE_TTL, "used": False}
        return code

    def _scripted_answer(self, path: str) -> dict | None:
        with self._lock:
            for item in self._scripted:
                if item["remaining"] > 0 and path.endswith(item["suffix"]):
                    item["remaining"] -= 1
                    return item
        return None

    # ---- Feishu routes -------------------------------------------------------------------------------------------
    def _feishu_token(self, body: Any) -> dict:
        if not isinstance(body, dict) or body.get("app_id") != self.app_id:
            raise _feishu_refusal("app_id")
        if body.get("app_secret") != self.app_secret:
            raise _feishu_refusal("app_secret")
        token, left = self._issue_token("feishu", "t-g1")
        return {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": left}

    def _feishu_auth(self) -> None:
        authorization = request.headers.get("Authorization", "")
        if not authorization.startswith("Bearer ") or not authorization[7:].strip():
            raise _feishu_refusal("no_token")
        if not self._token_ok("feishu", authorization[7:].strip()):
            raise _feishu_refusal("bad_token")

    @staticmethod
    def _parsed_content(body: dict, msg_type: str) -> Any:
        content = body.get("content")
        if not isinstance(content, str):
            raise _feishu_refusal("field", "content must be a JSON string")
        try:
            parsed = json.loads(content)
        except ValueError:
            raise _feishu_refusal("card" if msg_type == "interactive" else "param") from None
        if msg_type == "interactive" and not isinstance(parsed, dict):
            raise _feishu_refusal("card")
        return parsed

    def _feishu_send(self, body: Any) -> dict:
        self._feishu_auth()
        if request.args.get("receive_id_type") not in ("chat_id", "open_id", "user_id", "union_id", "email"):
            raise _feishu_refusal("field", "receive_id_type is required")
        if not isinstance(body, dict) or not body.get("receive_id") or not body.get("msg_type"):
            raise _feishu_refusal("field")
        chat_id, msg_type = str(body["receive_id"]), str(body["msg_type"])
        if (
            request.args["receive_id_type"] == "chat_id"
            and self.feishu_chats is not None
            and chat_id not in self.feishu_chats
        ):
            raise _feishu_refusal("out_of_chat")
        card = self._parsed_content(body, msg_type)
        message_id = "om_" + self._new_id("")
        now = str(int(time.time() * 1000))
        self.feishu_cards[message_id] = {
            "chat_id": chat_id,
            "msg_type": msg_type,
            "card": card,
            "updates": [],
            "create_time": now,
        }
        self.feishu_messages.append(message_id)
        return {
            "code": 0,
            "msg": "success",
            "data": {
                "message_id": message_id,
                "msg_type": msg_type,
                "create_time": now,
                "update_time": now,
                "deleted": False,
                "updated": False,
                "chat_id": chat_id,
                "sender": {"id": self.app_id, "id_type": "app_id", "sender_type": "app", "tenant_key": self.tenant_key},
                "body": {"content": body["content"]},
            },
        }

    def _feishu_patch(self, message_id: str, body: Any) -> dict:
        self._feishu_auth()
        record = self.feishu_cards.get(message_id)
        if record is None or record["msg_type"] != "interactive":
            raise _feishu_refusal("param", "invalid message_id")
        if not isinstance(body, dict):
            raise _feishu_refusal("field")
        record["updates"].append(self._parsed_content(body, "interactive"))
        return {"code": 0, "msg": "success", "data": {}}

    # ---- WeCom routes ----------------------------------------------------------------------------------------------
    def _wecom_token(self) -> dict:
        corpid, secret = request.args.get("corpid", ""), request.args.get("corpsecret", "")
        if not corpid:
            raise _wecom_refusal("corpid_missing")
        if not secret:
            raise _wecom_refusal("secret_missing")
        if corpid != self.corp_id:
            raise _wecom_refusal("corpid")
        if secret != self.corp_secret:
            raise _wecom_refusal("secret")
        token, left = self._issue_token("wecom", "")
        return {"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": left}

    def _wecom_auth(self, body: Any) -> dict:
        token = request.args.get("access_token", "")
        if not token:
            raise _wecom_refusal("token_missing")
        info = self._tokens.get(token)
        if info is None or info["platform"] != "wecom":
            raise _wecom_refusal("token")
        if info["expires_at"] <= time.time():
            raise _wecom_refusal("token_expired")
        if not isinstance(body, dict):
            raise _wecom_refusal("json")
        if str(body.get("agentid", "")) != str(self.agent_id):
            raise _wecom_refusal("agentid")
        return body

    def _wecom_send(self, body: Any) -> dict:
        body = self._wecom_auth(body)
        card = body.get("template_card")
        if body.get("msgtype") != "template_card" or not isinstance(card, dict):
            raise _wecom_refusal("msgtype")
        task_id = card.get("task_id")
        if (
            not isinstance(task_id, str)
            or not re.fullmatch(r"[0-9A-Za-z_\-@]{1,128}", task_id)
            or task_id in self.wecom_cards
        ):
            raise _wecom_refusal("task_id")
        users = [u for u in str(body.get("touser", "")).split("|") if u]
        invalid = (
            [] if self.wecom_users is None or users == ["@all"] else [u for u in users if u not in self.wecom_users]
        )
        if not users or len(invalid) == len(users):
            raise _wecom_refusal("users")
        msgid = secrets.token_urlsafe(24)
        response_code = self._new_response_code(task_id)
        self.wecom_cards[task_id] = {
            "touser": body.get("touser"),
            "card": card,
            "msgid": msgid,
            "response_code": response_code,
            "response_codes": [response_code],
            "updates": [],
        }
        return {
            "errcode": 0,
            "errmsg": "ok",
            "invaliduser": "|".join(invalid),
            "msgid": msgid,
            "response_code": response_code,
        }

    def _wecom_update(self, body: Any) -> dict:
        body = self._wecom_auth(body)
        info = self._response_codes.get(str(body.get("response_code", "")))
        if info is None or info["used"] or info["expires_at"] <= time.time():
            raise _wecom_refusal("response_code")
        has_button = isinstance(body.get("button"), dict) and isinstance(body["button"].get("replace_name"), str)
        if not has_button and not isinstance(body.get("template_card"), dict):
            raise _wecom_refusal("msgtype")
        record = self.wecom_cards.get(info["task_id"])
        if record is None:
            raise _wecom_refusal("response_code")
        info["used"] = True
        record["updates"].append(body)
        return {"errcode": 0, "errmsg": "ok", "invaliduser": []}

    # ---- the server ------------------------------------------------------------------------------------------------
    def _build_app(self) -> Flask:
        app = Flask("fakechatapps")

        def parse_json(raw: bytes) -> Any:
            try:
                return json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, ValueError):
                return None

        def answer(payload: dict, status: int = 200) -> Response:
            return Response(
                json.dumps(payload, ensure_ascii=False).encode(),
                status=status,
                content_type="application/json; charset=utf-8",
            )

        def handle(handler, *args) -> Response:
            raw = request.get_data(cache=True)
            body = parse_json(raw)
            with self._lock:
                self.requests.append(
                    {
                        "method": request.method,
                        "path": request.path,
                        "time": time.time(),
                        "query": request.args.to_dict(),
                        "headers": dict(request.headers),
                        "body": raw,
                        "json": body,
                    }
                )
            scripted = self._scripted_answer(request.path)
            if scripted and isinstance(scripted["payload"], bytes):
                return Response(scripted["payload"], status=scripted["status"], content_type="application/json")
            if scripted:
                return answer(dict(scripted["payload"]), scripted["status"])
            try:
                with self._lock:
                    return answer(handler(*args, body))
            except _Refusal as refusal:
                return answer(refusal.payload, refusal.status)

        @app.post("/open-apis/auth/v3/tenant_access_token/internal")
        def feishu_token():
            return handle(self._feishu_token)

        @app.post("/open-apis/im/v1/messages")
        def feishu_send():
            return handle(self._feishu_send)

        @app.patch("/open-apis/im/v1/messages/<message_id>")
        def feishu_patch(message_id):
            return handle(self._feishu_patch, message_id)

        @app.get("/cgi-bin/gettoken")
        def wecom_token():
            return handle(lambda _body: self._wecom_token())

        @app.post("/cgi-bin/message/send")
        def wecom_send():
            return handle(self._wecom_send)

        @app.post("/cgi-bin/message/update_template_card")
        def wecom_update():
            return handle(self._wecom_update)

        return app
