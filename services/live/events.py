"""The account's server URL: the platform's signed pushes, checked and opened (plaintext, compatible and safe
modes; the signature, replay and AES rules are docs/api.md §18's).
"""

import hmac
import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from models import immediate
from models.live import TaskLive
from services import hostile_xml
from services.errors import Forbidden, NotFound, ValidationFailed
from services.live.outcomes import apply_status
from services.platform.pushes import Query, decrypt, first_time, in_window, one, signature
from services.settings import EventKeys, Settings

log = logging.getLogger(__name__)
MAX_EVENT_BYTES = 64 * 1024  # a publish event is about 1 KiB
PUBLISH_EVENT = "PUBLISHJOBFINISH"  # freepublish's; MASSSENDJOBFINISH is a mass send's, not a submission's
# What reads another event (an edition's MASSSENDJOBFINISH), inside the push's transaction: True if it changed.
OtherEvent = Callable[[str, ET.Element, Settings], bool]


def keys_for(account: str, settings: Settings) -> EventKeys:
    """The account's token (404 when the account is unknown or has no WECHAT_<CODE>_TOKEN)."""
    keys = settings.wechat_event_keys.get(account) if account in settings.accounts else None
    if keys is None:
        raise NotFound(f"no server URL is configured for account {account}")
    return keys


def check_query(keys: EventKeys, query: Query, max_age: int) -> str:
    """The signature of a query signed with the account's token and within `max_age` of the clock (its once-only
    key: see first_time); else 403."""
    timestamp, nonce = one(query, "timestamp"), one(query, "nonce")
    expected = signature(keys.token, timestamp, nonce)
    if not hmac.compare_digest(one(query, "signature").encode(), expected.encode()):
        raise Forbidden("the signature does not match this account's token")
    in_window(timestamp, nonce, max_age)
    return expected


def _once(account: str, key: str, settings: Settings) -> bool:
    """The query's signature taken for the first time (inside immediate()), logged when it was not."""
    if first_time(f"wechat:{account}", key, settings.event_max_age):
        return True
    log.warning("account %s: a signed query already taken changed nothing", account)
    return False


def verify(account: str, query: Query, settings: Settings) -> str:
    """GET: the platform checks the server URL; answer `echostr` when the signature and timestamp hold and
    the (timestamp, nonce) is new. It is remembered, so a captured GET query cannot sign a push."""
    keys = keys_for(account, settings)
    key = check_query(keys, query, settings.event_max_age)
    echostr = one(query, "echostr")  # read before the nonce is taken: a refused query spends nothing
    with immediate():
        if not _once(account, key, settings):
            raise Forbidden("this signed (timestamp, nonce) was already taken")
    return echostr


def _parse(body: bytes) -> ET.Element:
    """The body as XML, read by a parser made for hostile input: no DTD, no entities, in any encoding."""
    if len(body) > MAX_EVENT_BYTES:
        raise ValidationFailed("not an event the platform sends", {"body": ["too large"]})
    try:
        return hostile_xml.read(body)
    except hostile_xml.UnreadableXml as exc:
        raise ValidationFailed("the body is not XML the platform sends", {"body": [str(exc)]}) from None


def _text(node: ET.Element | None, path: str) -> str | None:
    found = node.find(path) if node is not None else None
    return (found.text or "").strip() if found is not None and found.text is not None else None


def _safe_mode(account: str, keys: EventKeys, query: Query, body: bytes, settings: Settings) -> ET.Element:
    """The event sealed in `Encrypt` (an account with an AES key reads nothing else): 403 unless the post is
    in safe mode with a `msg_signature` over `Encrypt` that opens with the account's key and appid."""
    if one(query, "encrypt_type") != "aes":
        raise Forbidden(f"{account} has an AES key: only safe-mode pushes (encrypt_type=aes) are taken")
    try:
        encrypted = _text(_parse(body), "Encrypt")
    except ValidationFailed:
        raise Forbidden("a safe-mode push must be XML with Encrypt") from None
    if not encrypted:
        raise Forbidden("a safe-mode push must carry Encrypt")
    expected = signature(keys.token, one(query, "timestamp"), one(query, "nonce"), encrypted)
    if not hmac.compare_digest(one(query, "msg_signature").encode(), expected.encode()):
        raise Forbidden("msg_signature does not match this account's token")
    credentials = settings.wechat_credentials.get(account)
    if credentials is None:
        raise ValidationFailed(f"safe mode needs {account}'s appid set", {"Encrypt": ["cannot open"]})
    try:
        inner = decrypt(keys.aes_key, encrypted, credentials.appid)
    except ValueError as exc:
        raise Forbidden(f"Encrypt does not open with this account's key ({exc})") from None
    return _parse(inner)  # compatible mode's plaintext fields beside Encrypt are never read


def open_event(account: str, keys: EventKeys, query: Query, body: bytes, settings: Settings) -> ET.Element:
    """The event's XML of a signed query: in safe mode checked (403) and decrypted; 400 when unreadable."""
    if keys.aes_key:
        return _safe_mode(account, keys, query, body, settings)
    if one(query, "encrypt_type"):
        raise ValidationFailed(f"safe mode needs {account}'s AES key set", {"Encrypt": ["cannot open"]})
    return _parse(body)


def receive(account: str, query: Query, body: bytes, settings: Settings, other: OtherEvent | None = None) -> bool:
    """A pushed message: a publish event for one of the account's submissions still waiting for its result
    moves it on. True when it changed something. Anything else signed by the account (other events, a
    replayed (timestamp, nonce), unknown or settled publish ids, a body the service cannot read) changes
    nothing and is answered success; unsigned, stale or (with a key) unsealed ones are 403."""
    keys = keys_for(account, settings)
    key = check_query(keys, query, settings.event_max_age)
    try:
        event: ET.Element | None = open_event(account, keys, query, body, settings)
    except ValidationFailed as exc:  # signed by the account's token, yet unreadable: nothing to change
        log.warning(
            "account %s: a signed message the service cannot read was answered success: %s", account, exc.message
        )
        event = None
    publish_id, status, article_id, url = _publish_result(event) if event is not None else (None,) * 4
    with immediate():  # the query is spent even when its body was unreadable
        if not _once(account, key, settings):
            return False
        if publish_id is None:
            return event is not None and other is not None and other(account, event, settings)
        row = TaskLive.get_or_none((TaskLive.publish_id == publish_id) & (TaskLive.account == account))
        changed = row is not None and apply_status(row, settings.team, status, article_id, url)
    if changed:
        log.info("platform event: submission %s of %s moved on", publish_id, account)
    return changed


def _publish_result(event: ET.Element) -> tuple[str | None, Any, str | None, str | None]:
    """(publish_id, publish_status, article_id, first article_url) of a PUBLISHJOBFINISH, else all None."""
    if (_text(event, "Event") or "").upper() != PUBLISH_EVENT:
        return None, None, None, None
    info = event.find("PublishEventInfo")
    try:
        status: Any = int(_text(info, "publish_status") or "")
    except ValueError:
        return None, None, None, None
    urls = [_text(item, "article_url") for item in (info.findall("article_detail/item") if info is not None else [])]
    return _text(info, "publish_id") or None, status, _text(info, "article_id"), next(filter(None, urls), None)
