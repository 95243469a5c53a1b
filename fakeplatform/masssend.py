"""Sending to followers on the fake platform: message/mass/sendall (clientmsgid once in 24 h, the day's quota),
message/mass/get, tags/get, and the MASSSENDJOBFINISH event pushed to the account's server URL a moment later,
signed as freepublish's events are."""

import copy
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import requests

from fakeplatform.freepublish import FreePublishRoutes, beijing_day, signed_push
from fakeplatform.rules import Fault

SENDALL_PATH = "/cgi-bin/message/mass/sendall"
CLIENTMSGID_WINDOW = 24 * 3600  # a clientmsgid answers 45065 for a day after its send
CLIENTMSGID_MAX = 64  # bytes (else 45067)
DEFAULT_FOLLOWERS = 1280
# The platform's own tags start with 2 (星标组); an account's tags are numbered from 100.
DEFAULT_TAGS = (
    {"id": 2, "name": "星标组", "count": 12},
    {"id": 100, "name": "早读会员", "count": 326},
    {"id": 101, "name": "北京读者", "count": 517},
)
# errmsg of the codes a test most often forces on sendall (the platform's words).
SENDALL_ERRMSG = {
    -1: "system error",
    40001: "invalid credential, access_token is invalid or not latest",
    45028: "has no masssend quota",
    45065: "clientmsgid exist",
    45066: "same clientmsgid retry too fast",
    48001: "api unauthorized",
}


def mass_event_xml(msg_id: int, status: str, counts: dict[str, int] | None, urls: list[str]) -> bytes:
    """The MASSSENDJOBFINISH event: `status` "send success", "send fail" or "err(N)"; `counts` by the platform's
    names (TotalCount, FilterCount, SentCount, ErrorCount; None: all 0); `urls` in article order (ArticleIdx 1..)."""
    counts = counts or {}
    numbers = "".join(
        f"<{name}>{int(counts.get(name, 0))}</{name}>"
        for name in ("TotalCount", "FilterCount", "SentCount", "ErrorCount")
    )
    items = "".join(
        f"<item><ArticleIdx>{i}</ArticleIdx><ArticleUrl><![CDATA[{url}]]></ArticleUrl></item>"
        for i, url in enumerate(urls, 1)
    )
    # One copyright check per article, as the platform writes it for an article nobody declared original
    # (fakeplatform/samples/MASSSENDJOBFINISH.xml): not a reprint, sent as it is.
    checks = "".join(
        f"<item><ArticleIdx>{i}</ArticleIdx><UserDeclareState>0</UserDeclareState><AuditState>0</AuditState>"
        "<OriginalArticleUrl><![CDATA[]]></OriginalArticleUrl><OriginalArticleType>0</OriginalArticleType>"
        "<CanReprint>1</CanReprint><NeedReplaceContent>0</NeedReplaceContent>"
        "<NeedShowReprintSource>0</NeedShowReprintSource></item>"
        for i in range(1, len(urls) + 1)
    )
    return (
        f"<xml><ToUserName><![CDATA[gh_fake]]></ToUserName><FromUserName><![CDATA[oFakePlatform]]>"
        f"</FromUserName><CreateTime>{int(time.time())}</CreateTime><MsgType><![CDATA[event]]></MsgType>"
        f"<Event><![CDATA[MASSSENDJOBFINISH]]></Event><MsgID>{msg_id}</MsgID>"
        f"<Status><![CDATA[{status}]]></Status>{numbers}"
        f"<CopyrightCheckResult><Count>{len(urls)}</Count><ResultList>{checks}</ResultList><CheckState>1</CheckState>"
        f"</CopyrightCheckResult><ArticleUrlResult><Count>{len(urls)}</Count><ResultList>{items}</ResultList>"
        "</ArticleUrlResult></xml>"
    ).encode()


class MassSendRoutes(FreePublishRoutes):
    """Mixed into FakePlatform (before FreePublishRoutes, whose event targets, withhold_events and figures it
    shares), which provides requests_to and fail_next."""

    requests_to: Callable[[str], list[dict[str, Any]]]
    fail_next: Callable[..., None]
    _remove_draft: Callable[[str], None]
    pushed_events: list[bytes]

    def _init_masssend(self):
        self.mass_sends = {}  # msg_id (int) -> the send: see _sendall
        self.mass_quota_per_day = 1  # sends an account may make in a fake day (a subscription account's)
        self.mass_quota_left = defaultdict(lambda: self.mass_quota_per_day)  # appid -> sends left today
        self.mass_seconds = 0.05  # how long a send stays SENDING
        self.sendall_delay = 0.0  # seconds sendall waits before answering, after the send is recorded
        self._sendall_held: threading.Event | None = None  # set: hold_sendall's answers go (release_sendall)
        self.sendall_hold_max = 60.0  # seconds a held answer waits at most: a forgotten release hangs nothing for good
        self.sendall_retry_window = 0.0  # a clientmsgid repeated this soon after its send: 45066, not 45065
        self.followers = defaultdict(lambda: DEFAULT_FOLLOWERS)  # appid -> followers (is_to_all's TotalCount)
        # appid -> tags/get's tags (a test may replace an account's list)
        self.tags: defaultdict[str, list[dict[str, Any]]] = defaultdict(lambda: copy.deepcopy(list(DEFAULT_TAGS)))
        self.mass_event_answers = []  # (msg_id, HTTP status or None, body or error name) of each push
        self._mass_outcomes = []  # the Status the next sends finish with (default "send success")
        self._quota_day = beijing_day()

    # ---- control -----------------------------------------------------------------------------
    @property
    def sendall_calls(self) -> int:
        """Every sendall request received, answered or refused."""
        return len(self.requests_to(SENDALL_PATH))

    def fail_next_sendall(self, errcode, errmsg=None, times=1):
        """The next `times` sendall calls answer errcode (48001, 45066, 40001 ...) and send nothing."""
        self.fail_next(SENDALL_PATH, errcode, errmsg or SENDALL_ERRMSG.get(errcode, "system error"), times)

    def hold_sendall(self):
        """From now on sendall answers wait, after the send is recorded, until release_sendall (sendall_hold_max
        seconds at most): a test sees the service while the answer is on its way, for as long as its checks take."""
        with self._lock:
            self._sendall_held = threading.Event()

    def release_sendall(self):
        """The held sendall answers go, and the next ones are not held."""
        with self._lock:
            held, self._sendall_held = self._sendall_held, None
        if held is not None:
            held.set()

    def finish_next_mass_with(self, status, times=1):
        """The next `times` sends end with this Status: "send success", "send fail" or "err(N)"."""
        with self._lock:
            self._mass_outcomes.extend([status] * times)

    def reset_mass_quota(self, appid=None):
        """A new fake day: every account (or `appid`) has mass_quota_per_day sends again."""
        with self._lock:
            if appid is None:
                self.mass_quota_left.clear()
            else:
                self.mass_quota_left.pop(appid, None)

    def delete_mass(self, msg_id):
        """The send was deleted after sending (message/mass/get then answers DELETE)."""
        with self._lock:
            self.mass_sends[int(msg_id)]["status"] = "DELETE"

    def push_mass_event(self, msg_id, target=None, status=None):
        """Push the send's MASSSENDJOBFINISH (its result, or `status`) to its account's server URL, or to
        `target` ({"url", "token", "aes_key", "mode"}); (HTTP status, body) of the answer."""
        with self._lock:
            send = copy.deepcopy(self.mass_sends[int(msg_id)])
            target = target or self.event_targets[send["appid"]]
        xml = mass_event_xml(
            send["msg_id"], status or send["result"] or "send success", send["counts"], send["article_urls"]
        )
        with self._lock:
            self.pushed_events.append(xml)
        try:
            response = signed_push(
                target["url"], target["token"], xml, target["mode"], target["aes_key"], send["appid"]
            )
            answer: tuple[int, int | None, str] = (send["msg_id"], response.status_code, response.text)
        except requests.RequestException as exc:
            answer = (send["msg_id"], None, type(exc).__name__)
        with self._lock:
            self.mass_event_answers.append(answer)
        return answer[1:]

    # ---- routes (called with the lock held) ----------------------------------------------------
    def _sendall(self, appid, body, record):
        clientmsgid = body.get("clientmsgid")
        if clientmsgid is not None:
            if not isinstance(clientmsgid, str):
                raise Fault(47003, "argument invalid! hint: clientmsgid")
            if len(clientmsgid.encode()) > CLIENTMSGID_MAX:
                raise Fault(45067, "clientmsgid size out of limit")
            earlier = self._sent_with(appid, clientmsgid)
            if earlier is not None:  # checked first: a repeat is never a second send, whatever else changed
                if time.time() - earlier["time"] < self.sendall_retry_window:
                    raise Fault(45066, SENDALL_ERRMSG[45066])
                return {"errcode": 45065, "errmsg": SENDALL_ERRMSG[45065], "msg_id": earlier["msg_id"]}
        if body.get("msgtype") != "mpnews":
            raise Fault(40008, "invalid message type")
        mpnews = body.get("mpnews")
        draft = self._draft_or_none(appid, mpnews.get("media_id") if isinstance(mpnews, dict) else None)
        if draft is None:
            raise Fault(40007, "invalid media_id")
        total = self._audience(appid, body.get("filter"))
        reprint = body.get("send_ignore_reprint", 0)
        if type(reprint) is not int or reprint not in (0, 1):
            raise Fault(47003, "argument invalid! hint: send_ignore_reprint")
        if self._quota_day != beijing_day():
            self._quota_day = beijing_day()
            self.mass_quota_left.clear()
        if self.mass_quota_left[appid] <= 0:
            raise Fault(45028, SENDALL_ERRMSG[45028])
        self.mass_quota_left[appid] -= 1
        self._seq += 1
        msg_id, msg_data_id = 3_147_480_000 + self._seq, 2_455_000_000 + self._seq
        self.mass_sends[msg_id] = {
            "msg_id": msg_id,
            "msg_data_id": msg_data_id,
            "appid": appid,
            "media_id": mpnews["media_id"],
            "filter": copy.deepcopy(body["filter"]),
            "send_ignore_reprint": reprint,
            "clientmsgid": clientmsgid,
            "articles": copy.deepcopy(draft["articles"]),
            "status": "SENDING",
            "result": None,
            "total": total,
            "outcome": self._mass_outcomes.pop(0) if self._mass_outcomes else "send success",
            "counts": None,
            "article_ids": [],
            "article_urls": [],
            "time": time.time(),
        }
        timer = threading.Timer(self.mass_seconds, self._finish_mass, args=(msg_id,))
        timer.daemon = True
        timer.start()
        # The send is recorded: an answer that comes late (or never) cannot undo it.
        held, most = self._sendall_held, self.sendall_hold_max
        record["answer_after"] = (lambda: held.wait(most)) if held is not None else self.sendall_delay
        return {"errcode": 0, "errmsg": "send job submission success", "msg_id": msg_id, "msg_data_id": msg_data_id}

    def _mass_get(self, appid, body, _record=None):
        try:
            send = self.mass_sends.get(int(str(body.get("msg_id"))))
        except ValueError:
            send = None
        if send is None or send["appid"] != appid:
            raise Fault(40059, "invalid msg id")
        return {"msg_id": send["msg_id"], "msg_status": send["status"]}

    def _tags_get(self, appid, _body, _record=None):
        return {"tags": copy.deepcopy(self.tags[appid])}

    # ---- helpers -------------------------------------------------------------------------------
    def _sent_with(self, appid, clientmsgid):
        now = time.time()
        found = [
            s
            for s in self.mass_sends.values()
            if s["appid"] == appid and s["clientmsgid"] == clientmsgid and now - s["time"] < CLIENTMSGID_WINDOW
        ]
        return found[-1] if found else None

    def _draft_or_none(self, appid, media_id):
        draft = self.drafts.get(media_id) if isinstance(media_id, str) else None
        return draft if draft is not None and draft["appid"] == appid else None

    def _audience(self, appid, filter_):
        """Followers the filter reaches (TotalCount); a bad filter or an unknown tag is refused."""
        if not isinstance(filter_, dict) or type(filter_.get("is_to_all")) is not bool:
            raise Fault(47003, "argument invalid! hint: filter")
        if filter_["is_to_all"]:
            return self.followers[appid]
        tag_id = filter_.get("tag_id")
        found = [t for t in self.tags[appid] if type(tag_id) is int and t["id"] == tag_id]
        if not found:  # the platform's old name for a tag is a group (40050 "invalid group id")
            raise Fault(40050, "invalid group id hint: tag_id")
        return found[0]["count"]

    def _finish_mass(self, msg_id):
        with self._lock:
            send = self.mass_sends[msg_id]
            if send["status"] != "SENDING":
                return
            send["result"] = send["outcome"]
            total = send["total"]
            if send["result"] == "send success":
                filtered = total - total // 40  # refused, or over the month's 4 messages
                errors = filtered // 250
                send["counts"] = {
                    "TotalCount": total,
                    "FilterCount": filtered,
                    "SentCount": filtered - errors,
                    "ErrorCount": errors,
                }
                send["article_ids"] = [self._new_id("ARTICLE_") for _ in send["articles"]]
                # MASSSENDJOBFINISH's ArticleUrl is plain http, as the platform writes it
                send["article_urls"] = [f"http://mp.weixin.qq.com/s/{a}" for a in send["article_ids"]]
                send["day"] = beijing_day()
                send["status"] = "SEND_SUCCESS"
                self._remove_draft(send["media_id"])  # a sent draft is gone (draft/add's page)
            else:
                send["counts"] = {"TotalCount": total, "FilterCount": 0, "SentCount": 0, "ErrorCount": 0}
                send["status"] = "SEND_FAIL"
            target = None if self.withhold_events else self.event_targets.get(send["appid"])
        if target is not None:
            self.push_mass_event(msg_id, target)

    def _more_published(self, appid):
        """datacube: each article of the account's successful sends, msgid <msg_data_id>_<index> (1-based)."""
        return [
            (f"{send['msg_data_id']}_{index}", article_id, send["day"])
            for send in self.mass_sends.values()
            if send["appid"] == appid and send["status"] == "SEND_SUCCESS"
            for index, article_id in enumerate(send["article_ids"], 1)
        ]

    def _other_article(self, article_id):
        for send in self.mass_sends.values():
            if article_id in send["article_ids"]:
                return send["articles"][send["article_ids"].index(article_id)]
        return None
