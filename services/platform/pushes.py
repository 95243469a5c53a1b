"""What checks and opens a platform's signed push, shared by the account's server URL (services/live/events.py)
and WeCom's and Feishu's callbacks (services/chat/callbacks.py): its query's parameters, the SHA-1 signature,
the timestamp window and once-only key, and WeChat's and WeCom's AES (docs/api.md §18, §22).
"""

import base64
import hashlib
import struct
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from models.nonces import SeenNonce
from rules.client_input import whole_number
from rules.ids import iso, utcnow
from services.errors import Forbidden

Query = Mapping[str, Sequence[str]]  # every value of each parameter, as sent


def one(query: Query, name: str) -> str:
    """The parameter's value ("" when absent); 403 when it is given twice (which copy would be checked?)."""
    values = query.get(name) or ()
    if len(values) > 1:
        raise Forbidden(f"{name} is given more than once")
    return values[0] if values else ""


def signature(*parts: str) -> str:
    """SHA-1 of the parts sorted and joined: the platform's `signature` and `msg_signature`."""
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()  # noqa: S324 - the platform's scheme


def in_window(timestamp: str, nonce: str, max_age: int) -> int:
    """`timestamp` as a number; 403 unless both are given and it is within `max_age` seconds of the clock."""
    number = whole_number(timestamp, 12)
    if number is None or not nonce:
        raise Forbidden("timestamp and nonce must be given")
    if abs(time.time() - number) > max_age:
        raise Forbidden(f"the timestamp is more than {max_age} seconds from the service's clock")
    return number


def first_time(scope: str, key: str, max_age: int, timestamp: int = 0) -> bool:
    """Remember `key` for `scope` (inside immediate()); False when it was taken before. The key of a query
    whose signature sorts its parts is that signature: timestamp and nonce swapped sign the same, so a pair
    kept in order would let a captured query through again (docs/api.md §18). Where the order is signed
    (Feishu), the key is the nonce with its `timestamp`. Rows past twice the window go: a replay of them is
    refused by its timestamp."""
    now = utcnow()
    SeenNonce.delete().where(SeenNonce.seen_at < iso(now - timedelta(seconds=2 * max_age))).execute()
    return bool(
        SeenNonce.insert(scope=scope, timestamp=timestamp, nonce=key[:64], seen_at=iso(now))
        .on_conflict_ignore()
        .as_rowcount()
        .execute()
    )


def aes_key(encoding_aes_key: str) -> bytes:
    return base64.b64decode(encoding_aes_key + "=")


def decrypt(encoding_aes_key: str, encrypted: str, appid: str) -> bytes:
    """`Encrypt` -> the inner XML; ValueError when it does not open, or names another appid (WeCom's: the
    corp id)."""
    key = aes_key(encoding_aes_key)
    try:
        data = base64.b64decode(encrypted, validate=True)
    except ValueError:
        raise ValueError("Encrypt is not Base64") from None
    if not data or len(data) % 16:
        raise ValueError("Encrypt is not whole AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    unpadder = padding.PKCS7(256).unpadder()  # the platform pads to 32 bytes (WXBizMsgCrypt), not AES's 16
    try:
        plain = unpadder.update(decryptor.update(data) + decryptor.finalize()) + unpadder.finalize()
    except ValueError:
        raise ValueError("Encrypt has no valid padding") from None
    if len(plain) < 20:  # random(16) and the length come before the message
        raise ValueError("Encrypt has no valid padding")
    (length,) = struct.unpack(">I", plain[16:20])
    xml, from_appid = plain[20 : 20 + length], plain[20 + length :]
    if len(xml) != length or from_appid.decode(errors="replace") != appid:
        raise ValueError("Encrypt was not made for this account")
    return xml
