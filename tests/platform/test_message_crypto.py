"""The PKCS#7 padding of the platforms' sealed messages: WeChat's and WeCom's to 32 bytes (WXBizMsgCrypt),
Feishu's to AES's 16. What the platform sends opens; a padding it would never write is refused, in the
words the service always gave."""

import base64
import hashlib
import json
import os
import struct

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from fakeplatform.chatapps import feishu_encrypt
from fakeplatform.freepublish import encoding_aes_key, encrypt
from services.chat.callbacks import feishu
from services.errors import Forbidden
from services.platform.pushes import decrypt
from services.settings.chat import FeishuApp

APPID = "wx-padding"
XML = b"<xml><Event>PUBLISHJOBFINISH</Event></xml>"


def sealed(key: bytes, iv: bytes, plain: bytes) -> bytes:
    """AES-256-CBC of `plain` as it is (whole blocks, its padding the caller's)."""
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(plain) + encryptor.finalize()


def wechat_encrypt(aes_key: str, tail: bytes, length: int = len(XML)) -> str:
    """The platform's Encrypt with padding `tail` in place of its own."""
    key = base64.b64decode(aes_key + "=")
    plain = os.urandom(16) + struct.pack(">I", length) + XML + APPID.encode() + tail
    return base64.b64encode(sealed(key, key[:16], plain)).decode()


def unpadded_length():
    return 16 + 4 + len(XML) + len(APPID)


def test_wechat_padding_to_32_bytes_opens():
    key = encoding_aes_key()
    pad = 32 - unpadded_length() % 32
    assert decrypt(key, wechat_encrypt(key, bytes([pad]) * pad), APPID) == XML
    assert decrypt(key, encrypt(key, XML, APPID), APPID) == XML  # the fake's own sealing, written apart


@pytest.mark.parametrize(
    "tail",
    [
        lambda pad: bytes([pad]) * (pad - 1) + b"\x00",  # 0 pads nothing
        lambda pad: bytes([pad]) * (pad - 1) + bytes([pad + 32]),  # more than a 32-byte block
        lambda pad: bytes([pad + 1]) * (pad - 1) + bytes([pad]),  # the bytes before the last say another count
        lambda pad: bytes([pad]) * pad + bytes([16]) * 16,  # to 16 bytes only: not WeChat's block
    ],
    ids=["zero", "past-a-block", "uneven", "aes-block"],
)
def test_wechat_padding_the_platform_never_writes_is_refused(tail):
    key = encoding_aes_key()
    pad = 32 - unpadded_length() % 32
    with pytest.raises(ValueError, match="^Encrypt has no valid padding$"):
        decrypt(key, wechat_encrypt(key, tail(pad)), APPID)


def test_wechat_padding_longer_than_the_message_is_refused():
    """32 bytes of padding alone, once the 20 leading bytes are short: nothing left to read a length from."""
    key = encoding_aes_key()
    raw = base64.b64decode(key + "=")
    plain = os.urandom(16) + bytes([16]) * 16  # 32 bytes whose last 16 pad: 16 remain, fewer than 20
    with pytest.raises(ValueError, match="^Encrypt has no valid padding$"):
        decrypt(key, base64.b64encode(sealed(raw, raw[:16], plain)).decode(), APPID)


FEISHU = FeishuApp("cli_a", "s", "verify-token", "feishu-encrypt-key", "oc_1", "https://open.feishu.example")


def feishu_body(tail: bytes | None) -> bytes:
    plain = json.dumps({"type": "url_verification", "token": "verify-token", "challenge": "c-1"}).encode()
    if tail is None:
        return json.dumps({"encrypt": feishu_encrypt(FEISHU.encrypt_key, plain)}).encode()
    iv = os.urandom(16)
    data = sealed(hashlib.sha256(FEISHU.encrypt_key.encode()).digest(), iv, plain + tail(16 - len(plain) % 16))
    return json.dumps({"encrypt": base64.b64encode(iv + data).decode()}).encode()


def test_feishu_padding_to_16_bytes_opens():
    assert feishu(FEISHU, {}, feishu_body(None), 300) == {"challenge": "c-1"}
    assert feishu(FEISHU, {}, feishu_body(lambda pad: bytes([pad]) * pad), 300) == {"challenge": "c-1"}


@pytest.mark.parametrize(
    "tail",
    [
        lambda pad: bytes([pad]) * (pad - 1) + b"\x00",
        lambda pad: bytes([pad]) * (pad - 1) + bytes([pad + 16]),
        lambda pad: bytes([pad + 1]) * (pad - 1) + bytes([pad]),
    ],
    ids=["zero", "past-a-block", "uneven"],
)
def test_feishu_padding_it_never_writes_is_refused(tail):
    with pytest.raises(Forbidden, match="^the body does not open with FEISHU_ENCRYPT_KEY$"):
        feishu(FEISHU, {}, feishu_body(tail), 300)
