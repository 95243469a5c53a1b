"""Going live on the fake platform: freepublish/submit and freepublish/get, the article pages, and the
signed event push to an account's server URL in plaintext, compatible or safe (AES) mode, as the
platform does it (a publish finishes a moment after its submission)."""

import base64
import copy
import hashlib
import os
import secrets
import struct
import threading
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import requests
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from fakeplatform.rules import Fault

EVENT_MODES = ("plain", "compatible", "aes")
BEIJING = 8 * 3600  # the platform's day is Beijing's
DATACUBE_DAYS = 30  # a getarticletotaldetail detail_list covers at most 30 days from the publish day


def beijing_day(offset_days: int = 0) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() + BEIJING + offset_days * 86400))


def publish_url(appid: str, msg_data_id: str, article_id: str) -> str:
    """A published article's address as real PUBLISHJOBFINISH events and freepublish/get answers write it:
    plain http, `/s?__biz=<account>&mid=<msg_data_id>&idx=1&sn=<signature>#rd` (samples on the platform's
    community pages; the service keeps it as https, docs/api.md §18)."""
    biz = base64.b64encode(str(int(hashlib.sha1(appid.encode()).hexdigest()[:8], 16)).encode()).decode()  # noqa: S324
    sn = hashlib.sha1(article_id.encode()).hexdigest()[:32]  # noqa: S324
    return f"http://mp.weixin.qq.com/s?__biz={biz}&mid={msg_data_id}&idx=1&sn={sn}#rd"


def encoding_aes_key() -> str:
    """A new EncodingAESKey the way the platform's back office makes one: 43 letters and digits."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(43))


def sha1_sorted(*parts: str) -> str:
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()  # noqa: S324 - the platform's scheme


def encrypt(aes_key: str, xml: bytes, appid: str) -> str:
    """The platform's safe-mode `Encrypt`: AES-256-CBC of random(16) + length + xml + appid, PKCS#7 to 32."""
    key = base64.b64decode(aes_key + "=")
    plain = os.urandom(16) + struct.pack(">I", len(xml)) + xml + appid.encode()
    pad = 32 - len(plain) % 32
    plain += bytes([pad]) * pad
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(plain) + encryptor.finalize()).decode()


def publish_event_xml(
    publish_id: str, status: int, article_id: str | None, url: str | None, event: str = "PUBLISHJOBFINISH"
) -> bytes:
    detail = (
        (
            f"<article_detail><count>1</count><item><idx>1</idx><article_url><![CDATA[{url}]]></article_url>"
            "</item></article_detail>"
        )
        if url
        else ""
    )
    article = f"<article_id><![CDATA[{article_id}]]></article_id>" if article_id else ""
    return (
        f"<xml><ToUserName><![CDATA[gh_fake]]></ToUserName><FromUserName><![CDATA[oFakePlatform]]>"
        f"</FromUserName><CreateTime>{int(time.time())}</CreateTime><MsgType><![CDATA[event]]></MsgType>"
        f"<Event><![CDATA[{event}]]></Event><PublishEventInfo><publish_id>{publish_id}</publish_id>"
        f"<publish_status>{status}</publish_status>{article}{detail}<fail_idx></fail_idx>"
        "</PublishEventInfo></xml>"
    ).encode()


def signed_push(
    url: str,
    token: str,
    xml: bytes,
    mode: str = "plain",
    aes_key: str = "",
    appid: str = "",
    timeout: float = 5,
    timestamp: str | None = None,
    nonce: str | None = None,
) -> requests.Response:
    """POST one event to a server URL, signed (and in safe or compatible mode encrypted) as the platform does:
    now and with a new nonce unless given."""
    timestamp = timestamp or str(int(time.time()))
    nonce = nonce or str(secrets.randbelow(10**9))
    query = {
        "signature": sha1_sorted(token, timestamp, nonce),
        "timestamp": timestamp,
        "nonce": nonce,
        "openid": "oFakePlatform",
    }
    body = xml
    if mode in ("aes", "compatible"):
        encrypted = encrypt(aes_key, xml, appid)
        query.update(encrypt_type="aes", msg_signature=sha1_sorted(token, timestamp, nonce, encrypted))
        inner = (
            xml.decode()[len("<xml>") : -len("</xml>")]
            if mode == "compatible"
            else "<ToUserName><![CDATA[gh_fake]]></ToUserName>"
        )
        body = f"<xml>{inner}<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>".encode()
    return requests.post(url, params=query, data=body, headers={"Content-Type": "text/xml"}, timeout=timeout)


class FreePublishRoutes:
    """Mixed into FakePlatform, which provides drafts, base_url, _lock and _new_id."""

    drafts: dict[str, dict[str, Any]]
    base_url: str | None
    _lock: threading.RLock
    _seq: int
    _new_id: Callable[[str], str]
    _remove_draft: Callable[[str], None]

    def _init_freepublish(self):
        self.publishes = {}  # publish_id -> {"appid", "media_id", "status", "article_id", "article_url", ...}
        self.event_targets = {}  # appid -> {"url", "token", "aes_key", "mode"}
        self.event_answers = []  # (publish_id, HTTP status, body) of each push
        self.pushed_events = []  # the XML of every event pushed (publish and mass send), oldest first
        self.publish_seconds = 0.3  # how long a submission stays "publishing" (1)
        self.withhold_events = False  # finish without pushing (the service then learns it by polling)
        self._outcomes = []  # publish_status the next submissions finish with (default 0: live)
        self.day_figures = {}  # (article_id, "YYYY-MM-DD") -> what readers did that day, set by a test
        self.delay_days = set()  # stat_dates not final yet: an answer holding one says is_delay true
        self.extra_totals = []  # items a test adds to every getarticletotaldetail answer, as they are

    # ---- control -----------------------------------------------------------------------------
    def send_events_to(self, appid, url, token, aes_key="", mode="plain"):
        """Push this account's publish events to `url` (its server URL), signed with `token`."""
        if mode not in EVENT_MODES:
            raise ValueError(f"mode must be one of {EVENT_MODES}")
        with self._lock:
            self.event_targets[appid] = {"url": url, "token": token, "aes_key": aes_key, "mode": mode}

    def set_publish_day(self, msg_data_id, day):
        """The day (YYYY-MM-DD, the platform's) a publish or a mass send went out, as datacube counts it:
        e.g. an article published days ago, for a test or the demo."""
        with self._lock:
            for record in [*self.publishes.values(), *getattr(self, "mass_sends", {}).values()]:
                if str(record["msg_data_id"]) == str(msg_data_id):
                    record["day"] = day

    def finish_next_publish_with(self, status, times=1):
        """The next `times` submissions end with this publish_status (2-6: failures)."""
        with self._lock:
            self._outcomes.extend([status] * times)

    def check_server_url(self, appid, echostr=None):
        """The platform's check of an account's server URL (fakeplatform/samples/server_url_check.json): a GET
        signed with the token, carrying `echostr`, which the server answers as it is; (status, text, the query)."""
        with self._lock:
            target = dict(self.event_targets[appid])
        echostr = echostr or str(secrets.randbelow(10**18))
        timestamp, nonce = str(int(time.time())), str(secrets.randbelow(10**9))
        query = {
            "signature": sha1_sorted(target["token"], timestamp, nonce),
            "timestamp": timestamp,
            "nonce": nonce,
            "echostr": echostr,
        }
        response = requests.get(target["url"], params=query, timeout=5)
        return response.status_code, response.text, query

    # ---- routes ------------------------------------------------------------------------------
    def _freepublish_submit(self, appid, body, _record=None):
        media_id = body.get("media_id")
        draft = self.drafts.get(media_id) if isinstance(media_id, str) else None
        if draft is None or draft["appid"] != appid:
            raise Fault(40007, "invalid media_id")
        publish_id = str(2_247_483_000 + self._seq * 7 + secrets.randbelow(7))
        self._seq += 1
        outcome = self._outcomes.pop(0) if self._outcomes else 0
        self.publishes[publish_id] = {
            "appid": appid,
            "media_id": media_id,
            "status": 1,
            "outcome": outcome,
            "msg_data_id": str(2_650_000_000 + self._seq),
            "article_id": None,
            "article_url": None,
            "title": draft["articles"][0].get("title", ""),
            "articles": copy.deepcopy(draft["articles"]),  # the draft goes once published
        }
        timer = threading.Timer(self.publish_seconds, self._finish_publish, args=(publish_id,))
        timer.daemon = True
        timer.start()
        return {
            "errcode": 0,
            "errmsg": "ok",
            "publish_id": publish_id,
            "msg_data_id": self.publishes[publish_id]["msg_data_id"],
        }

    def _freepublish_get(self, appid, body, _record=None):
        publish = self.publishes.get(str(body.get("publish_id")))
        if publish is None or publish["appid"] != appid:
            raise Fault(53600, "invalid publish_id")
        answer = {"publish_id": str(body.get("publish_id")), "publish_status": publish["status"], "fail_idx": []}
        if publish["status"] == 0:
            answer["article_id"] = publish["article_id"]
            answer["article_detail"] = {"count": 1, "item": [{"idx": 1, "article_url": publish["article_url"]}]}
        return answer

    def _finish_publish(self, publish_id):
        with self._lock:
            publish = self.publishes[publish_id]
            if publish["outcome"] == 0:
                publish["article_id"] = self._new_id("ARTICLE_")
                publish["article_url"] = publish_url(publish["appid"], publish["msg_data_id"], publish["article_id"])
                publish["day"] = beijing_day()  # the day its figures count from (datacube's ref_date)
            publish["status"] = publish["outcome"]  # last: a test that reads it without the lock sees it whole
            if publish["status"] == 0:
                self._remove_draft(publish["media_id"])
            target = None if self.withhold_events else self.event_targets.get(publish["appid"])
        if target is not None:
            self.push_publish_event(publish_id, target)

    def push_publish_event(self, publish_id, target=None, event="PUBLISHJOBFINISH"):
        """Push the submission's current state to its account's server URL; (status, body) of the answer."""
        with self._lock:
            publish = dict(self.publishes[publish_id])
            target = target or self.event_targets[publish["appid"]]
        xml = publish_event_xml(publish_id, publish["status"], publish["article_id"], publish["article_url"], event)
        with self._lock:
            self.pushed_events.append(xml)
        try:
            response = signed_push(
                target["url"], target["token"], xml, target["mode"], target["aes_key"], publish["appid"]
            )
            answer: tuple[str, int | None, str] = (publish_id, response.status_code, response.text)
        except requests.RequestException as exc:
            answer = (publish_id, None, type(exc).__name__)
        with self._lock:
            self.event_answers.append(answer)
        return answer[1:]

    def _article_totals(self, appid, body, _record=None):
        """datacube/getarticletotaldetail as the platform's page "获取发表内容发表详细数据" describes it
        (fakeplatform/samples/datacube_getarticletotaldetail.json): the contents PUBLISHED from begin_date to
        end_date (end_date at most yesterday), each with a detail_list of running totals — an entry for
        every stat_date from the publish day (ref_date) to yesterday, at most DATACUBE_DAYS of them, each
        the sum of the days' figures up to it. `is_delay` is true when an entry's day is in delay_days."""
        begin, end = body.get("begin_date"), body.get("end_date")
        if not all(isinstance(d, str) and len(d) == 10 and d[4] == d[7] == "-" for d in (begin, end)):
            raise Fault(61500, "date format error")
        yesterday = beijing_day(-1)
        if begin > end or end > yesterday:
            raise Fault(61501, "date range error")
        items, delayed = [], False
        for msgid, article_id, day in self._published(appid):
            if not begin <= day <= end:
                continue
            entries = self._running_totals(article_id, day, yesterday)
            delayed = delayed or any(entry["stat_date"] in self.delay_days for entry in entries)
            items.append({"ref_date": day, "msgid": msgid, "publish_type": 0, "detail_list": entries})
        return {"list": items + list(self.extra_totals), "is_delay": delayed}

    def _published(self, appid) -> list[tuple[str, str, str]]:
        """(msgid, article_id, publish day) of the account's live contents: its freepublish articles
        (`<msg_data_id>_1`) and those of its mass sends."""
        return [
            (f"{publish['msg_data_id']}_1", publish["article_id"], publish["day"])
            for publish in self.publishes.values()
            if publish["appid"] == appid and publish["status"] == 0 and publish.get("day")
        ] + self._more_published(appid)

    def _running_totals(self, article_id, first, last) -> list[dict[str, Any]]:
        """One entry per day from `first` to `last` (at most DATACUBE_DAYS): each figure summed from `first`;
        a figure no day had so far is left out, as the platform leaves out what it does not count."""
        entries: list[dict[str, Any]] = []
        sums: dict[str, int] = {}
        day = date.fromisoformat(first)
        while day.isoformat() <= last and len(entries) < DATACUBE_DAYS:
            for name, value in self._figures(article_id, day.isoformat()).items():
                sums[name] = sums.get(name, 0) + value
            entries.append({"stat_date": day.isoformat(), **sums})
            day += timedelta(days=1)
        return entries

    def _figures(self, article_id, day):
        """What readers did on one day with one article: a test's (day_figures), else made up from the
        article and the day."""
        figures = self.day_figures.get((article_id, day))
        if figures is None:
            seed = int(hashlib.sha1(f"{article_id}{day}".encode()).hexdigest()[:8], 16)  # noqa: S324
            reads = 40 + seed % 460
            figures = {
                "read_user": reads,
                "share_user": reads // 9,
                "like_user": reads // 14,
                "zaikan_user": reads // 31,
                "collection_user": reads // 23,
                "comment_count": reads // 47,
            }
        return figures

    def _more_published(self, _appid) -> list[tuple[str, str, str]]:
        """The account's contents live by other means (mass sends override this)."""
        return []

    def _article_page(self, article_id):
        """What a reader opens: the published article (title and body) at its URL."""
        with self._lock:
            found = [p for p in self.publishes.values() if p["article_id"] == article_id]
            article = found[0]["articles"][0] if found else self._other_article(article_id)
        if article is None:
            return None
        return (
            f"<!doctype html><meta charset=utf-8><title>{article.get('title', '')}</title>"
            f"<h1>{article.get('title', '')}</h1>{article.get('content', '')}"
        )

    def _other_article(self, _article_id) -> dict[str, Any] | None:
        """An article live by other means than freepublish (mass sends override this)."""
        return None
