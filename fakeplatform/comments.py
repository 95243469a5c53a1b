"""Readers' comments on the fake platform: comment/list, open, close, markelect, unmarkelect, delete,
reply/add and reply/delete, as the platform's pages on 留言管理 describe them (fakeplatform/samples/comment_*.json).

Comments live per (appid, msg_data_id, index) and only on what the fake really published (freepublish) or
mass-sent, `index` counting the articles of the send from 0. A test writes them as readers would
(add_comment, add_comments, remove_comment) and can make the next calls fail (comments_fail_next).
"""

import secrets
import threading
import time
from typing import Any

from fakeplatform.rules import Fault

COMMENT_PATHS = (
    "/cgi-bin/comment/list",
    "/cgi-bin/comment/open",
    "/cgi-bin/comment/close",
    "/cgi-bin/comment/markelect",
    "/cgi-bin/comment/unmarkelect",
    "/cgi-bin/comment/delete",
    "/cgi-bin/comment/reply/add",
    "/cgi-bin/comment/reply/delete",
)
PAGE_MAX = 50  # comment/list: "获取数目（>=50会被拒绝）", refused with 88010
# The platform's words for its comment errors (the comment pages' error tables).
COMMENT_ERRMSG = {
    -1: "system error",
    47003: "argument invalid!",
    88000: "without comment privilege",
    88001: "msg_data is not exists",
    88002: "the article is limit for safety",
    88003: "elected comment upper limit",
    88004: "comment was deleted by user",
    88005: "already reply",
    88007: "reply content beyond max len or content len is zero",
    88008: "comment is not exists",
    88009: "reply is not exists",
    88010: "count range error",
}


class CommentRoutes:
    """Mixed into FakePlatform, which provides publishes, mass_sends, without_comments and _lock."""

    publishes: dict[str, dict[str, Any]]
    mass_sends: dict[int, dict[str, Any]]
    without_comments: set[str]
    _lock: threading.RLock

    def _init_comments(self):
        # (appid, msg_data_id, index) -> the comments as comment/list gives them, oldest first, each with
        # "deleted": None, "reader" (removed by the reader) or "account" (comment/delete)
        self.comments: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        self._comments_open: dict[tuple[str, str, int], bool] = {}  # set by comment/open and close
        self._comment_faults: list[int] = []  # errcodes the next comment/* calls answer, in order
        self.comment_page_at_most: int | None = None  # comment/list answers at most this many, whatever `count` asks
        self.reply_max = 1000  # characters of a reply (88007 past it; the pages give no number)

    # ---- control -----------------------------------------------------------------------------
    def add_comment(
        self, msg_data_id, index, content, openid=None, create_time=None, appid=None, featured=False, reply=None
    ) -> int:
        """A reader's comment on article `index` (from 0) of a send the fake made -> its user_comment_id;
        `featured` and `reply` (its text) as if the account had featured or answered it in the back office."""
        with self._lock:
            key = self._comment_key(msg_data_id, index, appid)
            found = self.comments.setdefault(key, [])
            comment_id = max((c["user_comment_id"] for c in found), default=0) + 1
            created = int(time.time()) if create_time is None else int(create_time)
            comment = {
                "user_comment_id": comment_id,
                "openid": openid or f"oReader{secrets.token_hex(10)}",
                "create_time": created,
                "content": content,
                "comment_type": 1 if featured else 0,
                "deleted": None,
            }
            if reply is not None:
                answered = min(created + 3600, max(created, int(time.time())))  # an hour later, never ahead
                comment["reply"] = {"content": reply, "create_time": answered}
            found.append(comment)
            return comment_id

    def add_comments(self, msg_data_id, index, n, appid=None) -> list[int]:
        """`n` comments from `n` readers, a second apart, the last one now."""
        now = int(time.time())
        return [
            self.add_comment(msg_data_id, index, f"读者留言 {i + 1}", create_time=now - n + i + 1, appid=appid)
            for i in range(n)
        ]

    def remove_comment(self, msg_data_id, index, user_comment_id):
        """The reader deleted the comment: gone from comment/list, 88004 to markelect and reply."""
        with self._lock:
            self._find_comment(self._comment_key(msg_data_id, index, None), user_comment_id)["deleted"] = "reader"

    def comments_open(self, msg_data_id, index) -> bool:
        """Whether readers may comment: comment/open and close, else the article's need_open_comment."""
        with self._lock:
            key = self._comment_key(msg_data_id, index, None)
            return self._comments_open.get(key, bool(self._sent_article(*key).get("need_open_comment")))

    def comments_fail_next(self, errcode, times=1):
        """The next `times` comment/* calls answer `errcode` (with the platform's words) and change nothing."""
        with self._lock:
            self._comment_faults.extend([int(errcode)] * times)

    # ---- routes (called with the lock held) ----------------------------------------------------
    def _comment_list(self, appid, body, _record=None):
        key = self._comment_call(appid, body)
        begin, count, kind = body.get("begin"), body.get("count"), body.get("type")
        if not _uint(begin) or not _uint(count) or kind not in (0, 1, 2) or type(kind) is not int:
            raise _refusal(47003)
        if not 0 < count < PAGE_MAX:
            raise _refusal(88010)
        shown = [
            c
            for c in self.comments.get(key, [])
            if not c["deleted"] and (kind == 0 or c["comment_type"] == kind - 1)  # 1 ordinary, 2 featured
        ]
        shown.sort(key=lambda c: (c["create_time"], c["user_comment_id"]), reverse=True)  # newest first
        count = min(count, self.comment_page_at_most or count)
        page = [{k: v for k, v in c.items() if k != "deleted"} for c in shown[begin : begin + count]]
        return {"errcode": 0, "errmsg": "ok", "total": len(shown), "comment": page}

    def _comment_open(self, appid, body, _record=None):
        self._comments_open[self._comment_call(appid, body)] = True
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_close(self, appid, body, _record=None):
        self._comments_open[self._comment_call(appid, body)] = False
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_markelect(self, appid, body, _record=None):
        self._live_comment(appid, body)["comment_type"] = 1
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_unmarkelect(self, appid, body, _record=None):
        self._live_comment(appid, body)["comment_type"] = 0
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_delete(self, appid, body, _record=None):
        self._live_comment(appid, body)["deleted"] = "account"
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_reply_add(self, appid, body, _record=None):
        comment = self._live_comment(appid, body)
        content = body.get("content")
        if not isinstance(content, str) or not content or len(content) > self.reply_max:
            raise _refusal(88007)
        if "reply" in comment:
            raise _refusal(88005)
        comment["reply"] = {"content": content, "create_time": int(time.time())}
        return {"errcode": 0, "errmsg": "ok"}

    def _comment_reply_delete(self, appid, body, _record=None):
        comment = self._live_comment(appid, body)
        if comment.pop("reply", None) is None:
            raise _refusal(88009)
        return {"errcode": 0, "errmsg": "ok"}

    # ---- helpers (called with the lock held) ---------------------------------------------------
    def _comment_call(self, appid, body) -> tuple[str, str, int]:
        """The article a comment call names; the forced failure, 88000 without the privilege, 88001 for a
        send the fake never made (index from 0; left out, the first article)."""
        if self._comment_faults:
            raise _refusal(self._comment_faults.pop(0))
        if appid in self.without_comments:
            raise _refusal(88000)
        msg_data_id, index = body.get("msg_data_id"), body.get("index", 0)
        if not _uint(msg_data_id) or not _uint(index):
            raise _refusal(47003)
        articles = self._sent_articles(appid, str(msg_data_id))
        if articles is None or index >= len(articles):
            raise _refusal(88001)
        return (appid, str(msg_data_id), index)

    def _live_comment(self, appid, body) -> dict[str, Any]:
        key = self._comment_call(appid, body)
        comment_id = body.get("user_comment_id")
        if not _uint(comment_id):
            raise _refusal(47003)
        found = [c for c in self.comments.get(key, []) if c["user_comment_id"] == comment_id]
        if not found or found[0]["deleted"] == "account":
            raise _refusal(88008)
        if found[0]["deleted"] == "reader":
            raise _refusal(88004)
        return found[0]

    def _sent_articles(self, appid, msg_data_id) -> list[dict[str, Any]] | None:
        """The articles of the account's live send `msg_data_id` (published, or mass-sent with success)."""
        for publish in self.publishes.values():
            if publish["appid"] == appid and publish["status"] == 0 and str(publish["msg_data_id"]) == msg_data_id:
                return publish["articles"]
        for send in self.mass_sends.values():
            if send["appid"] == appid and send["status"] == "SEND_SUCCESS" and str(send["msg_data_id"]) == msg_data_id:
                return send["articles"]
        return None

    def _sent_article(self, appid, msg_data_id, index) -> dict[str, Any]:
        return (self._sent_articles(appid, msg_data_id) or [{}])[index]

    def _comment_key(self, msg_data_id, index, appid) -> tuple[str, str, int]:
        """(appid, msg_data_id, index) of a send the fake made; appid None: the account that made it."""
        msg_data_id = str(msg_data_id)
        appids = (
            [appid] if appid else sorted({r["appid"] for r in [*self.publishes.values(), *self.mass_sends.values()]})
        )
        for candidate in appids:
            articles = self._sent_articles(candidate, msg_data_id)
            if articles is not None:
                if not 0 <= int(index) < len(articles):
                    raise ValueError(f"send {msg_data_id} has {len(articles)} article(s), no index {index}")
                return (candidate, msg_data_id, int(index))
        raise ValueError(f"the fake published or sent nothing live as msg_data_id {msg_data_id}")

    def _find_comment(self, key, user_comment_id) -> dict[str, Any]:
        for comment in self.comments.get(key, []):
            if comment["user_comment_id"] == int(user_comment_id):
                return comment
        raise KeyError(f"no comment {user_comment_id} on {key}")


def _uint(value) -> bool:
    return type(value) is int and value >= 0


def _refusal(errcode) -> Fault:
    return Fault(errcode, COMMENT_ERRMSG.get(errcode, "system error"))
