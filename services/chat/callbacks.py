"""The chat apps' callbacks, checked and opened: Feishu's card request URL and WeCom's callback URL
(docs/api.md §22 "Clicks"; the once-only (timestamp, nonce) is remembered as services/live/events.py does).
"""

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from models import immediate
from services.errors import Forbidden, ValidationFailed
from services.live.events import decrypt, first_time, in_window, signature
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


def _fresh(scope: str, timestamp: str, nonce: str, max_age: int) -> None:
    """403 unless the timestamp is within the window and (timestamp, nonce) is new."""
    when = in_window(timestamp, nonce, max_age)
    with immediate():
        if not first_time(scope, when, nonce, max_age):
            raise Forbidden("this (timestamp, nonce) was already taken")


def _feishu_open(app: FeishuApp, body: bytes) -> dict[str, Any]:
    try:
        outer = json.loads(body)
    except ValueError:
        raise ValidationFailed("the body is not JSON", {"body": ["not JSON"]}) from None
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
        plain = decryptor.update(data[16:]) + decryptor.finalize()
        if not 1 <= plain[-1] <= 16:
            raise ValueError("no valid padding")
        opened = json.loads(plain[: -plain[-1]])
    except ValueError:
        raise Forbidden("the body does not open with FEISHU_ENCRYPT_KEY") from None
    if not isinstance(opened, dict):
        raise Forbidden("the opened body is not a JSON object")
    return opened


def feishu(app: FeishuApp, headers: Mapping[str, str], body: bytes, max_age: int) -> dict[str, Any] | Click:
    """`{"challenge"}` for the URL check, else the click; 403 for what the app did not sign or send."""
    if len(body) > MAX_CALLBACK_BYTES:
        raise ValidationFailed("the callback is too large", {"body": ["too large"]})
    event = _feishu_open(app, body)
    if event.get("type") == "url_verification":
        if not hmac.compare_digest(str(event.get("token") or "").encode(), app.verification_token.encode()):
            raise Forbidden("the verification token does not match FEISHU_VERIFICATION_TOKEN")
        return {"challenge": str(event.get("challenge") or "")}
    timestamp = headers.get("X-Lark-Request-Timestamp", "")
    nonce = headers.get("X-Lark-Request-Nonce", "")
    if app.encrypt_key:
        expected = hashlib.sha256(timestamp.encode() + nonce.encode() + app.encrypt_key.encode() + body).hexdigest()
        if not hmac.compare_digest(headers.get("X-Lark-Signature", "").encode(), expected.encode()):
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
    except (TypeError, ValueError):
        raise ValidationFailed("the click carries no task version", {"version": ["not a number"]}) from None
    note = extra.get("note")
    extra["note"] = str(note)[:2000] if note is not None else None
    return Click(platform, identity[:128], task_id[:64], action[:32], number, **extra)


def _wecom_signed(app: WeComApp, query: Mapping[str, str], sealed: str, max_age: int) -> bytes:
    timestamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
    expected = signature(app.token, timestamp, nonce, sealed)
    if not hmac.compare_digest(query.get("msg_signature", "").encode(), expected.encode()):
        raise Forbidden("msg_signature does not match WECOM_TOKEN")
    try:
        opened = decrypt(app.aes_key, sealed, app.corp_id)
    except ValueError as exc:
        raise Forbidden(f"the message does not open with WECOM_AES_KEY ({exc})") from None
    _fresh("wecom", timestamp, nonce, max_age)
    return opened


def wecom_check(app: WeComApp, query: Mapping[str, str], max_age: int) -> str:
    """GET: the callback URL check; the decrypted echostr."""
    return _wecom_signed(app, query, query.get("echostr", ""), max_age).decode("utf-8", "replace")


def wecom(app: WeComApp, query: Mapping[str, str], body: bytes, max_age: int) -> Click | None:
    """POST: a template_card_event click; None for another message (answered and ignored)."""
    if len(body) > MAX_CALLBACK_BYTES:
        raise ValidationFailed("the callback is too large", {"body": ["too large"]})
    try:
        sealed = (fromstring(body, forbid_dtd=True).findtext("Encrypt") or "").strip()
        inner = fromstring(_wecom_signed(app, query, sealed, max_age), forbid_dtd=True)
    except (DefusedXmlException, SyntaxError, ValueError):
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
