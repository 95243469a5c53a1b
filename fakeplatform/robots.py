"""Fake group robots of WeCom, Feishu and DingTalk, over real HTTP on 127.0.0.1 (tests and the demo).

Each checks a message as its platform documents it: the path and key, the JSON shape and size, and
for Feishu and DingTalk the HMAC-SHA256 signature (computed here on its own, not with the service's
code). It answers as the platform does, HTTP 200 with a code in the body (0: delivered), including
its refusals: a bad signature, a bad shape, and more than its rate a minute (WeCom 45009 "api freq
out of limit", DingTalk 410100; Feishu 11232 past 100 a minute). `fail_next` scripts refusals, and
replies no platform writes (bytes, answered as they are).
What a delivered message would make live in the chat is kept too: `mentions` (any platform's mention
syntax, and the body's mention fields) and `links` (what a chat client links: addresses with a
scheme, www., bare domains), from the text and, for DingTalk, the title.
"""

import base64
import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections import deque

from werkzeug.wrappers import Request, Response

from fakeplatform.threaded import Served

log = logging.getLogger(__name__)

PATHS = {"wecom": "/cgi-bin/webhook/send", "feishu": "/open-apis/bot/v2/hook/", "dingtalk": "/robot/send"}
RATE = {"wecom": 20, "feishu": 100, "dingtalk": 20}  # messages a minute
OK = {
    "wecom": {"errcode": 0, "errmsg": "ok"},
    "dingtalk": {"errcode": 0, "errmsg": "ok"},
    "feishu": {"StatusCode": 0, "StatusMessage": "success", "code": 0, "data": {}, "msg": "success"},
}
REFUSALS = {
    "wecom": {
        "key": {"errcode": 93000, "errmsg": "invalid webhook url"},
        "shape": {"errcode": 40008, "errmsg": "invalid message type"},
        "size": {"errcode": 40058, "errmsg": "markdown.content exceed max length 4096"},
        "rate": {"errcode": 45009, "errmsg": "api freq out of limit"},
    },
    "feishu": {
        "key": {"code": 19001, "msg": "param invalid: incoming webhook access token invalid", "data": {}},
        "shape": {"code": 9499, "msg": "Bad Request", "data": {}},
        "size": {"code": 9499, "msg": "Bad Request", "data": {}},
        "sign": {
            "code": 19021,
            "msg": "sign match fail or timestamp is not within one hour from current time",
            "data": {},
        },
        "rate": {"code": 11232, "msg": "frequency limited psm[lark.oapi.app_platform_runtime]", "data": {}},
    },
    "dingtalk": {
        "key": {"errcode": 300001, "errmsg": "token is not exist"},
        "shape": {"errcode": 40035, "errmsg": "缺少参数 json"},
        "size": {"errcode": 460101, "errmsg": "message too long, exceed 20000 bytes"},
        "sign": {"errcode": 310000, "errmsg": "sign not match"},
        "rate": {"errcode": 410100, "errmsg": "send too fast, exceed 20 times per minute"},
    },
}
SIZE = {"wecom": 4096, "feishu": 20000, "dingtalk": 20000}  # bytes of the text
# Feishu's <at user_id="all"></at> (text), WeCom's <@userid> (markdown), @all and DingTalk's @138… forms.
MENTION = re.compile(r"<at\b[^>]*>|<@[^>]*>|@\w+", re.IGNORECASE)
# What a chat or mail client turns into a link: a scheme's address, www.…, a bare domain.
LINK = re.compile(r"\b[a-z][a-z0-9+.-]*://\w\S*|\bwww\.\w\S*|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b", re.IGNORECASE)


def live_parts(text):
    """(mentions, links) a chat would make of `text`."""
    return MENTION.findall(text), LINK.findall(text)


class FakeRobot:
    """One robot of `kind` (wecom, feishu, dingtalk) with `key` in its URL and an optional `secret`."""

    def __init__(self, kind, key="robot-key-0123456789", secret="", on_message=None):
        self.kind, self.key, self.secret = kind, key, secret
        self.on_message = on_message or (lambda text: log.info("%s robot got:\n%s", kind, text))
        self.texts = []  # the text of every message delivered, oldest first
        self.mentions, self.links = [], []  # what the delivered messages made live (the module's docstring)
        self.attempts = []  # (request body or None, reply) of every request
        self.scripted: deque[dict | bytes] = deque()  # replies to give before delivering again
        self.delay = 0.0  # seconds before each answer: a slow robot
        self.arrived = threading.Condition()
        self._sent_at: deque[float] = deque()  # time.monotonic() of each delivery in the last minute
        self._served = Served(self._app)

    @property
    def url(self):
        base = f"{self._served.url}{PATHS[self.kind]}"
        return {
            "wecom": f"{base}?key={self.key}",
            "feishu": base + self.key,
            "dingtalk": f"{base}?access_token={self.key}",
        }[self.kind]

    def fail_next(self, times=1, reply=None):
        """The next `times` messages are refused with `reply` (default: the kind's rate refusal); a `bytes`
        reply is answered as it is, HTTP 200 (a body json.dumps would never write)."""
        with self.arrived:
            self.scripted.extend([reply or REFUSALS[self.kind]["rate"]] * times)

    def wait_for(self, count, timeout=10):
        """True once `count` messages have been delivered."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.texts) >= count, timeout)

    def stop(self):
        self._served.stop()

    # ---- the platform's side --------------------------------------------------------------------
    def _app(self, environ, start_response):
        with Request(environ) as request:
            return self._answer(request)(environ, start_response)

    def _answer(self, request):
        try:
            body = json.loads(request.get_data())
        except ValueError:
            body = None
        time.sleep(self.delay)
        with self.arrived:
            reply, text = self._check(request, body)
            if reply is None and self.scripted:
                reply = self.scripted.popleft()
            if reply is None:
                reply = self._rate()
            self.attempts.append((body, reply or OK[self.kind]))
            if reply is None:
                self.texts.append(text)
                self._live(body, text)
                self.on_message(text)
            self.arrived.notify_all()
        if isinstance(reply, bytes):
            return Response(reply, 200, mimetype="application/json")
        return Response(json.dumps(reply or OK[self.kind], ensure_ascii=False), 200, mimetype="application/json")

    def _check(self, request, body):
        """(refusal or None, the message's text)."""
        refusals = REFUSALS[self.kind]
        if request.method != "POST" or not self._key_matches(request):
            return refusals["key"], None
        if self.kind == "feishu" and self.secret and not _feishu_signed(body, self.secret):
            return refusals["sign"], None
        if self.kind == "dingtalk" and self.secret and not _dingtalk_signed(request.args, self.secret):
            return refusals["sign"], None
        text = _text(self.kind, body)
        if not isinstance(text, str) or not text:
            return refusals["shape"], None
        if len(text.encode()) > SIZE[self.kind]:
            return refusals["size"], None
        return None, text

    def _live(self, body, text):
        """Mentions and links as the chat would show them: the shown text (and DingTalk's title), and
        the mention fields (WeCom's mentioned lists, DingTalk's `at`)."""
        title = (body.get("markdown") or {}).get("title", "") if self.kind == "dingtalk" else ""
        mentions, links = live_parts(f"{title}\n{text}")
        part = body.get(body.get("msgtype")) if self.kind != "feishu" else {}
        at = body.get("at") if isinstance(body.get("at"), dict) else {}
        mentions += [
            *part.get("mentioned_list", []),
            *part.get("mentioned_mobile_list", []),
            *at.get("atMobiles", []),
            *at.get("atUserIds", []),
            *(["isAtAll"] if at.get("isAtAll") else []),
        ]
        self.mentions += mentions
        self.links += links

    def _key_matches(self, request):
        if self.kind == "feishu":
            return request.path == PATHS["feishu"] + self.key
        name = "key" if self.kind == "wecom" else "access_token"
        return request.path == PATHS[self.kind] and request.args.get(name) == self.key

    def _rate(self):
        now = time.monotonic()
        while self._sent_at and self._sent_at[0] <= now - 60:
            self._sent_at.popleft()
        if len(self._sent_at) >= RATE[self.kind]:
            return REFUSALS[self.kind]["rate"]
        self._sent_at.append(now)
        return None


def _text(kind, body):
    """The message's text from the documented shape, or None when the shape is wrong."""
    if not isinstance(body, dict):
        return None
    if kind == "feishu":
        content = body.get("content")
        return content.get("text") if body.get("msg_type") == "text" and isinstance(content, dict) else None
    kind_of = body.get("msgtype")
    part = body.get(kind_of) if kind_of in ("text", "markdown") else None
    if not isinstance(part, dict):
        return None
    if kind == "dingtalk" and kind_of == "markdown":
        return part.get("text") if isinstance(part.get("title"), str) and part.get("title") else None
    return part.get("content")


def _fresh(seconds):
    return abs(time.time() - seconds) <= 3600  # both platforms: within an hour of now


def _feishu_signed(body, secret):
    """`timestamp` (Unix seconds, a string) and `sign` = Base64(HMAC-SHA256(key=timestamp\\nsecret, ""))."""
    timestamp = body.get("timestamp") if isinstance(body, dict) else None
    if not isinstance(timestamp, str) or not timestamp.isdigit() or not _fresh(int(timestamp)):
        return False
    expected = base64.b64encode(hmac.new(f"{timestamp}\n{secret}".encode(), b"", hashlib.sha256).digest()).decode()
    return hmac.compare_digest(str(body.get("sign")), expected)


def _dingtalk_signed(args, secret):
    """`timestamp` (ms) and `sign` = Base64(HMAC-SHA256(key=secret, timestamp\\nsecret)) in the query."""
    timestamp = args.get("timestamp", "")
    if not timestamp.isdigit() or not _fresh(int(timestamp) / 1000):
        return False
    expected = base64.b64encode(hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest())
    return hmac.compare_digest(args.get("sign", "").encode(), expected)
