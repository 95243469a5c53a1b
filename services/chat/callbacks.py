"""The chat apps' callbacks, checked and opened: Feishu's card request URL and WeCom's callback URL
(docs/api.md §22 "Clicks"; what they share with the server URL is services/platform/pushes.py's).
"""

import base64
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from models import immediate
from rules.client_input import load_json
from services import hostile_xml
from services.errors import Forbidden, ValidationFailed
from services.platform.pushes import Query, decrypt, first_time, in_window, one, signature
from services.settings.chat import FeishuApp, WeComApp

MAX_CALLBACK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Click:
    platform: str  # feishu | wecom
    identity: str  # open_id | userid
    task_id: str
    action: str
    version: int
    note: str | None = None
    message_id: str | None = None  # Feishu's card
    response_code: str | None = None  # WeCom's, to update the card once


def _fresh(scope: str, timestamp: str, nonce: str, max_age: int, signed: str | None = None) -> None:
    """403 unless the timestamp is within the window and the request is new: its `signed` signature where that
    sorts timestamp and nonce with the rest (WeCom), else its (timestamp, nonce) (pushes.first_time)."""
    when = in_window(timestamp, nonce, max_age)
    with immediate():
        fresh = first_time(scope, signed, max_age) if signed else first_time(scope, nonce, max_age, when)
        if not fresh:
            raise Forbidden("this (timestamp, nonce) was already taken")


def _json(raw: bytes) -> Any:
    """The strict reader of client input (docs/api.md §2): deep nesting, NaN, 1e400 or a lone surrogate is a
    400 before the once-only (timestamp, nonce) is spent, never a 500 after."""
    try:
        return load_json(raw)
    except ValueError as exc:
        raise ValidationFailed(f"the body is not JSON the service can read: {exc}", {"body": [str(exc)]}) from None


def _feishu_open(app: FeishuApp, body: bytes, signed: bool) -> dict[str, Any]:
    """The event; with a key, sealed in `encrypt`. What opens with the key yet is not JSON it can read is a 400
    when X-Lark-Signature holds (`signed`), else 403: a wrong key's bytes are no body of the app's."""
    outer = _json(body)
    if not isinstance(outer, dict):
        raise ValidationFailed("the body is not a JSON object", {"body": ["not an object"]})
    if not app.encrypt_key:
        return outer
    try:
        data = base64.b64decode(str(outer.get("encrypt") or ""), validate=True)
        if len(data) < 32 or len(data) % 16:
            raise ValueError("not whole AES blocks")
        decryptor = Cipher(
            algorithms.AES(hashlib.sha256(app.encrypt_key.encode()).digest()), modes.CBC(data[:16])
        ).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        plain = unpadder.update(decryptor.update(data[16:]) + decryptor.finalize()) + unpadder.finalize()
    except ValueError:
        raise Forbidden("the body does not open with FEISHU_ENCRYPT_KEY") from None
    try:
        opened = _json(plain)
    except ValidationFailed:
        if signed:
            raise
        raise Forbidden("the body does not open with FEISHU_ENCRYPT_KEY") from None
    if not isinstance(opened, dict):
        raise Forbidden("the opened body is not a JSON object")
    return opened


def feishu(app: FeishuApp, headers: Mapping[str, str], body: bytes, max_age: int) -> dict[str, Any] | Click:
    """`{"challenge"}` for the URL check, else the click; 403 for what the app did not sign or send."""
    if len(body) > MAX_CALLBACK_BYTES:
        raise ValidationFailed("the callback is too large", {"body": ["too large"]})
    timestamp = headers.get("X-Lark-Request-Timestamp", "")
    nonce = headers.get("X-Lark-Request-Nonce", "")
    expected = hashlib.sha256(timestamp.encode() + nonce.encode() + app.encrypt_key.encode() + body).hexdigest()
    signed = bool(app.encrypt_key) and hmac.compare_digest(
        headers.get("X-Lark-Signature", "").encode(), expected.encode()
    )
    event = _feishu_open(app, body, signed)
    if event.get("type") == "url_verification":
        if not hmac.compare_digest(str(event.get("token") or "").encode(), app.verification_token.encode()):
            raise Forbidden("the verification token does not match FEISHU_VERIFICATION_TOKEN")
        return {"challenge": str(event.get("challenge") or "")}
    if app.encrypt_key and not signed:
        raise Forbidden("X-Lark-Signature does not match FEISHU_ENCRYPT_KEY")
    header = _object(event, "header")
    if not hmac.compare_digest(str(header.get("token") or "").encode(), app.verification_token.encode()):
        raise Forbidden("the verification token does not match FEISHU_VERIFICATION_TOKEN")
    _fresh("feishu", timestamp, nonce, max_age)
    if header.get("event_type") != "card.action.trigger":
        raise ValidationFailed("not a card action", {"header.event_type": ["not card.action.trigger"]})
    body_event = _object(event, "event")
    action = _object(body_event, "action")
    value, form = _object(action, "value"), _object(action, "form_value")
    operator, context = _object(body_event, "operator"), _object(body_event, "context")
    return _click(
        "feishu",
        operator.get("open_id"),
        value.get("taskId"),
        value.get("action"),
        value.get("version"),
        note=form.get("note"),
        message_id=context.get("open_message_id"),
    )


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    found = parent.get(key)
    return found if isinstance(found, dict) else {}


def _click(platform: str, identity: Any, task_id: Any, action: Any, version: Any, **extra: Any) -> Click:
    """A Click of the callback's fields, each checked and cut to its length; `extra`: Click's optional fields."""
    if not (isinstance(identity, str) and identity and isinstance(task_id, str) and isinstance(action, str)):
        raise ValidationFailed("the click names no one, no task or no action", {"action": ["incomplete"]})
    try:
        number = int(version)
    except (TypeError, ValueError, OverflowError):
        raise ValidationFailed("the click carries no task version", {"version": ["not a number"]}) from None
    note = extra.get("note")
    extra["note"] = str(note)[:2000] if note is not None else None
    return Click(platform, identity[:128], task_id[:64], action[:32], number, **extra)


def _wecom_signed(app: WeComApp, query: Query, sealed: str, max_age: int) -> bytes:
    """What `sealed` opens to, when msg_signature holds and is new; a parameter given twice is 403 (as on the
    server URL: which copy would be checked?)."""
    timestamp, nonce = one(query, "timestamp"), one(query, "nonce")
    expected = signature(app.token, timestamp, nonce, sealed)
    if not hmac.compare_digest(one(query, "msg_signature").encode(), expected.encode()):
        raise Forbidden("msg_signature does not match WECOM_TOKEN")
    try:
        opened = decrypt(app.aes_key, sealed, app.corp_id)
    except ValueError as exc:
        raise Forbidden(f"the message does not open with WECOM_AES_KEY ({exc})") from None
    _fresh("wecom", timestamp, nonce, max_age, signed=expected)
    return opened


def wecom_check(app: WeComApp, query: Query, max_age: int) -> str:
    """GET: the callback URL check; the decrypted echostr."""
    return _wecom_signed(app, query, one(query, "echostr"), max_age).decode("utf-8", "replace")


def wecom(app: WeComApp, query: Query, body: bytes, max_age: int) -> Click | None:
    """POST: a template_card_event click; None for another message (answered and ignored)."""
    if len(body) > MAX_CALLBACK_BYTES:
        raise ValidationFailed("the callback is too large", {"body": ["too large"]})
    try:
        sealed = (hostile_xml.read(body).findtext("Encrypt") or "").strip()
        inner = hostile_xml.read(_wecom_signed(app, query, sealed, max_age))
    except hostile_xml.UnreadableXml:
        raise Forbidden("the body is not the XML WeCom sends") from None
    if (inner.findtext("Event") or "") != "template_card_event":
        return None
    action, _, rest = (inner.findtext("EventKey") or "").partition(":")
    task_id, _, version = rest.rpartition(":")
    return _click(
        "wecom",
        inner.findtext("FromUserName"),
        task_id,
        action,
        version,
        response_code=(inner.findtext("ResponseCode") or "").strip() or None,
    )
