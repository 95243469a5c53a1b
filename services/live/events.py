"""The account's server URL (docs/api.md §18): the platform's signed pushes, checked and opened.

Plaintext, compatible and safe (AES) modes. The query's `signature` is always checked; in safe mode
(`encrypt_type=aes`) `msg_signature` too, and `Encrypt` is opened the platform's way: AES-256-CBC with
the key Base64-decoded from EncodingAESKey + "=", the IV its first 16 bytes, PKCS#7 padding to 32
bytes, and inside 16 random bytes, a 4-byte big-endian length, the XML, then the account's appid.
"""
import base64
import hashlib
import hmac
import logging
import struct
import xml.etree.ElementTree as ET  # the body's size and DOCTYPE are refused before parsing
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from models import immediate
from models.live import TaskLive
from services.errors import Forbidden, NotFound, ValidationFailed
from services.live.outcomes import apply_status
from services.settings import EventKeys, Settings

log = logging.getLogger(__name__)
MAX_EVENT_BYTES = 64 * 1024  # a publish event is about 1 KiB
PUBLISH_EVENTS = ("PUBLISHJOBFINISH", "MASSSENDJOBFINISH")


def signature(*parts: str) -> str:
    """SHA-1 of the parts sorted and joined: the platform's `signature` and `msg_signature`."""
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()  # noqa: S324 - the platform's scheme


def keys_for(account: str, settings: Settings) -> EventKeys:
    """The account's token (404 when the account is unknown or has no WECHAT_<CODE>_TOKEN)."""
    keys = settings.wechat_event_keys.get(account) if account in settings.accounts else None
    if keys is None:
        raise NotFound(f"no server URL is configured for account {account}")
    return keys


def check_query(keys: EventKeys, query: dict[str, str]) -> None:
    """403 unless `signature` is the SHA-1 of the token, timestamp and nonce."""
    given = query.get("signature") or ""
    expected = signature(keys.token, query.get("timestamp") or "", query.get("nonce") or "")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise Forbidden("the signature does not match this account's token")


def verify(account: str, query: dict[str, str], settings: Settings) -> str:
    """GET: the platform checks the server URL; answer `echostr` when the signature holds."""
    keys = keys_for(account, settings)
    check_query(keys, query)
    return query.get("echostr") or ""


def aes_key(encoding_aes_key: str) -> bytes:
    return base64.b64decode(encoding_aes_key + "=")


def decrypt(encoding_aes_key: str, encrypted: str, appid: str) -> bytes:
    """`Encrypt` -> the inner XML; ValueError when it does not open, or names another appid."""
    key = aes_key(encoding_aes_key)
    try:
        data = base64.b64decode(encrypted, validate=True)
    except ValueError:
        raise ValueError("Encrypt is not Base64") from None
    if not data or len(data) % 16:
        raise ValueError("Encrypt is not whole AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = decryptor.update(data) + decryptor.finalize()
    pad = plain[-1]
    if not 1 <= pad <= 32 or len(plain) < 20 + pad:
        raise ValueError("Encrypt has no valid padding")
    plain = plain[:-pad]
    (length,) = struct.unpack(">I", plain[16:20])
    xml, from_appid = plain[20:20 + length], plain[20 + length:]
    if len(xml) != length or from_appid.decode(errors="replace") != appid:
        raise ValueError("Encrypt was not made for this account")
    return xml


def _parse(body: bytes) -> ET.Element:
    if len(body) > MAX_EVENT_BYTES or b"<!DOCTYPE" in body.upper() or b"<!ENTITY" in body.upper():
        raise ValidationFailed("not an event the platform sends", {"body": ["too large, or declares entities"]})
    try:
        return ET.fromstring(body)  # noqa: S314 - bounded, no DOCTYPE (checked above)
    except ET.ParseError:
        raise ValidationFailed("the body is not XML", {"body": ["not XML"]}) from None


def _text(node: ET.Element | None, path: str) -> str | None:
    found = node.find(path) if node is not None else None
    return (found.text or "").strip() if found is not None and found.text is not None else None


def open_event(account: str, query: dict[str, str], body: bytes, settings: Settings) -> ET.Element:
    """The event's XML, its signatures checked (403) and, in safe mode, decrypted."""
    keys = keys_for(account, settings)
    check_query(keys, query)
    outer = _parse(body)
    if query.get("encrypt_type") != "aes":
        return outer
    encrypted = _text(outer, "Encrypt")
    if encrypted is None:
        raise ValidationFailed("safe mode without Encrypt", {"Encrypt": ["missing"]})
    expected = signature(keys.token, query.get("timestamp") or "", query.get("nonce") or "", encrypted)
    if not hmac.compare_digest((query.get("msg_signature") or "").encode(), expected.encode()):
        raise Forbidden("msg_signature does not match this account's token")
    credentials = settings.wechat_credentials.get(account)
    if not keys.aes_key or credentials is None:
        raise ValidationFailed(f"safe mode needs {account}'s AES key and appid set", {"Encrypt": ["cannot open"]})
    try:
        return _parse(decrypt(keys.aes_key, encrypted, credentials.appid))
    except ValueError as exc:
        raise Forbidden(f"Encrypt does not open with this account's key ({exc})") from None


def receive(account: str, query: dict[str, str], body: bytes, settings: Settings) -> bool:
    """A pushed message: a publish event for one of the account's submissions moves it on. True when it
    changed something; anything else signed by the account (other events, repeats, unknown publish ids, a
    body that is not XML or cannot be opened here) changes nothing and is answered success (403 unsigned)."""
    try:
        event = open_event(account, query, body, settings)
    except ValidationFailed as exc:  # signed by the account's token, yet unreadable: nothing to change
        log.warning("account %s: a signed message the service cannot read was answered success: %s", account,
                    exc.message)
        return False
    if (_text(event, "Event") or "").upper() not in PUBLISH_EVENTS:
        return False
    info = event.find("PublishEventInfo")
    publish_id = _text(info, "publish_id")
    try:
        status: Any = int(_text(info, "publish_status") or "")
    except ValueError:
        return False
    url = None
    for item in info.findall("article_detail/item") if info is not None else []:
        url = _text(item, "article_url")
        if url:
            break
    if not publish_id:
        return False
    with immediate():
        row = TaskLive.get_or_none((TaskLive.publish_id == publish_id) & (TaskLive.account == account))
        changed = row is not None and apply_status(row, settings.team, status, _text(info, "article_id"), url)
    if changed and row is not None:
        log.info("platform event: submission %s of %s is now %s", publish_id, account, row.status)
    return changed
