"""Client of the WeChat Official Account API (docs/api.md §5): token, uploads, drafts, materials.

Every call makes one HTTP request with a timeout; only a rejected access token (40001, 40014,
42001) leads to one renewed token (normal mode first, docs/api.md §5 "Tokens") and one repeat of that
call. Nothing else is repeated automatically: a POST that timed out may still have taken effect on the platform.
Secrets (appsecret, access tokens) never reach exception messages or logs.
"""

import json
import logging
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import requests

from models.platform import PlatformToken, claim_forced_refresh
from models.writes import immediate
from rules.client_input import load_json, whole_number
from rules.ids import iso, now_iso, parse_iso, utcnow
from services.errors import PlatformRefused, ServiceError
from services.images.platform_format import KIND_TYPES, image_kind, prepare_body_image, upload_name
from services.outbound import body_chunks, watched_session, within
from services.platform.uploads import cached_upload, forget_upload, remember_upload  # noqa: F401 (re-export)
from services.settings import Settings

log = logging.getLogger(__name__)

TOKEN_ERRORS = frozenset({40001, 40014, 42001})
UPLINK_BYTES_PER_SECOND = 128 * 1024  # the slowest uplink a call's deadline allows for (1 Mbit/s)
TOKEN_SECONDS_MAX = 86_400  # a token answer's expires_in is held to this (the platform gives 7200)
TOKEN_MARGIN = timedelta(minutes=5)
MAX_ANSWER_BYTES = 4 * 2**20  # larger is refused (docs/api.md §19: a datacube answer of 20,000 days)
FORCE_SPACING = timedelta(seconds=30)  # between forced stable_token refreshes of one account (docs/api.md §5)
# The platform counts its days in Beijing's time, whatever REVIEW_TIME_ZONE is: the publish day datacube
# answers by, its stat_date and "yesterday" (docs/api.md §19).
PLATFORM_ZONE = ZoneInfo("Asia/Shanghai")
COMMENTS_PAGE_MAX = (
    50  # comment/list refuses a count of 50 or more (docs/api.md §5 "Documents, samples and this service")
)
FORCE_POLL = 0.2  # seconds between looks for the token another process is forcing
# One token call at a time per account and process.
_REFRESH_LOCKS: defaultdict[tuple, threading.Lock] = defaultdict(threading.Lock)
_RID = re.compile(r"\s*\brid:\s*(\S+)\s*$")
_SECRET_PARAM = re.compile(r"\b(access_token|secret|appsecret)=[^&\s'\"]*", re.I)


class _RedactTokens(logging.Filter):
    """urllib3 logs every request line, query string included, at DEBUG: mask tokens there."""

    def filter(self, record):
        message = record.getMessage()
        if "access_token=" in message or "secret=" in message:
            record.msg, record.args = _SECRET_PARAM.sub(lambda m: m.group(1) + "=***", message), ()
        return True


logging.getLogger("urllib3.connectionpool").addFilter(_RedactTokens())


class PlatformError(Exception):
    """A failed platform call; str() is one line a person can act on."""

    def __init__(self, errcode, errmsg, rid=None, answer=None):
        super().__init__(errmsg)
        self.errcode = errcode  # the platform's errcode, None when it never answered one
        self.errmsg = errmsg
        self.rid = rid  # the platform's request id, for a support ticket
        self.answer = answer or {}  # the refusal's other fields (45065 names the msg_id already sent)

    def __str__(self):
        if self.errcode is None:
            return self.errmsg
        return f"platform error {self.errcode}: {self.errmsg}"

    def refused(self, what: str) -> ServiceError:
        """This failure as the service's 502 answer (docs/api.md §2); `what` names the call."""
        return PlatformRefused(f"the platform refused {what}: {self}", {"errcode": self.errcode, "errmsg": self.errmsg})


class PlatformClient:
    """One account on one platform; cheap to create. A job's upload threads share one: each
    thread has its own HTTP session (requests' Session is not meant to be shared between threads)."""

    def __init__(self, account, appid, secret, base_url, timeout=(5, 20)):
        self.account = account
        self.appid = appid
        self._secret = secret
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._local = threading.local()

    def __repr__(self):
        return f"<PlatformClient {self.account} at {self.base_url}>"

    @property
    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = watched_session()
            session.trust_env = False  # no netrc/proxy surprises; the URL says where to go
        return session

    # ---- access token --------------------------------------------------------------------------
    # docs/api.md §5 "Tokens": a forced stable_token refresh invalidates the token of every other holder of
    # the AppID (the team's other tools, other processes) and is allowed 20 times a day, 30 s apart; so a
    # refused token is first asked for again in normal mode, and forced only when that answers the very
    # token refused, at most once per account and FORCE_SPACING across processes.
    def access_token(self) -> str:
        """A valid token: the cached one unless it expires within 5 minutes, else normal mode's."""
        if cached := self._cached_token():
            return cached
        # Single flight: threads that find no token at once make one call.
        with _REFRESH_LOCKS[(self.base_url, self.account)]:
            if cached := self._cached_token():
                return cached
            return self._store(*self._ask(force_refresh=False))

    def renewed_token(self, refused: str) -> str:
        """A token to repeat a call with, after the platform refused `refused` (40001, 40014, 42001)."""
        with _REFRESH_LOCKS[(self.base_url, self.account)]:
            cached = self._cached_token()
            if cached and cached != refused:  # another thread or process has stored a new one meanwhile
                return cached
            token, expires_at = self._ask(force_refresh=False)
            if token != refused:  # expired, or replaced by another holder: normal mode has the new one
                return self._store(token, expires_at)
            now = utcnow()
            if claim_forced_refresh(self.account, iso(now), iso(now - FORCE_SPACING)):
                return self._store(*self._ask(force_refresh=True))
            return self._forced_elsewhere(refused)

    def _forced_elsewhere(self, refused: str) -> str:
        """Another process forced a refresh within FORCE_SPACING: the token it stores (its call ends within
        the read timeout), else normal mode's; still the refused one: a failure, forcing nothing more."""
        deadline = time.monotonic() + _seconds(self.timeout, connect=False)
        while time.monotonic() < deadline:
            cached = self._cached_token()
            if cached and cached != refused:
                return cached
            time.sleep(FORCE_POLL)
        token, expires_at = self._ask(force_refresh=False)
        if token != refused:
            return self._store(token, expires_at)
        raise PlatformError(
            None,
            f"platform error: the access token was refused, and a forced refresh was made less than "
            f"{FORCE_SPACING.seconds} s ago (the platform allows one per {FORCE_SPACING.seconds} s): try again later",
        )

    def _cached_token(self):
        row = PlatformToken.get_or_none(PlatformToken.account == self.account)
        if row is None or not row.access_token:
            return None
        return row.access_token if parse_iso(row.expires_at) - TOKEN_MARGIN > utcnow() else None

    def _ask(self, force_refresh: bool) -> tuple[str, str]:
        """stable_token in normal or forced mode -> (token, expires_at)."""
        payload = self._request(
            "/cgi-bin/stable_token",
            {
                "grant_type": "client_credential",
                "appid": self.appid,
                "secret": self._secret,
                "force_refresh": force_refresh,
            },
        )
        token = payload.get("access_token")
        try:  # the platform gives 7200; a larger figure is held to a day (a datetime past 9999 cannot be made)
            expires_in = min(int(payload.get("expires_in")), TOKEN_SECONDS_MAX)
        except (TypeError, ValueError, OverflowError):
            expires_in = 0
        if not isinstance(token, str) or not token or expires_in <= 0:
            raise PlatformError(None, "platform error: stable_token answered without a usable token")
        log.info("platform %s: access token (force_refresh=%s, expires_in=%s)", self.account, force_refresh, expires_in)
        return token, iso(utcnow() + timedelta(seconds=expires_in))

    def _store(self, token: str, expires_at: str) -> str:
        with immediate():
            PlatformToken.insert(
                account=self.account, access_token=token, expires_at=expires_at, updated_at=now_iso()
            ).on_conflict(
                conflict_target=[PlatformToken.account],
                preserve=[PlatformToken.access_token, PlatformToken.expires_at, PlatformToken.updated_at],
            ).execute()
        return token

    # ---- transport ------------------------------------------------------------------------------
    def _call(self, path, json_body=None, files=None, params=None, method="POST"):
        """An authenticated call; a refused token is renewed once and the call repeated once."""
        token = self.access_token()
        try:
            return self._request(path, json_body, files, params, token, method)
        except PlatformError as exc:
            if exc.errcode not in TOKEN_ERRORS:
                raise
            log.warning(
                "platform %s: %s refused the token (%s); renewing it once", self.account, _name(path), exc.errcode
            )
            refused = exc
        try:
            token = self.renewed_token(token)
        except PlatformError as renewal:  # the call itself was refused, nothing taken: its code, not "no answer"
            raise PlatformError(
                refused.errcode, f"{refused.errmsg} (no new token: {renewal})", refused.rid, refused.answer
            ) from None
        return self._request(path, json_body, files, params, token, method)

    def _request(self, path, json_body=None, files=None, params=None, token=None, method="POST"):
        name = _name(path)
        query = dict(params or {})
        if token:
            query["access_token"] = token
        data, headers = None, {}
        if json_body is not None:
            data = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json; charset=utf-8"
        # The whole call, all told, and time to send the body at UPLINK_BYTES_PER_SECOND (a 10 MiB cover).
        sent = len(data or b"") + sum(len(part[1]) for part in (files or {}).values())
        seconds = _seconds(self.timeout, True) + _seconds(self.timeout, False) + sent / UPLINK_BYTES_PER_SECOND
        with within(seconds) as cut:
            try:
                resp = self._session.request(
                    method,
                    self.base_url + path,
                    params=query,
                    data=data,
                    files=files,
                    headers=headers,
                    timeout=self.timeout,
                    allow_redirects=False,
                    stream=True,
                )
                content = self._read_within_deadline(resp, name)
            except requests.RequestException as exc:
                raise self._unreachable(exc, cut.expired.is_set(), seconds, name) from None
        if cut.expired.is_set():  # cut mid-answer: what was read may look whole
            raise self._unreachable(requests.Timeout(), True, seconds, name)
        if resp.status_code != 200:
            raise PlatformError(None, f"platform error: HTTP {resp.status_code} from {name}")
        # The strict reader of client input (docs/api.md §5): a body it refuses (nested too deeply, NaN,
        # a number out of range, a lone surrogate) is a failed call in words, never an exception escaping.
        try:
            payload = load_json(content)
        except json.JSONDecodeError:
            payload = None
        except ValueError as exc:
            raise PlatformError(
                None, f"platform error: {name} answered a body that cannot be read as JSON: {exc}"
            ) from None
        if not isinstance(payload, dict):
            ctype = resp.headers.get("Content-Type", "no content type")
            raise PlatformError(None, f"platform error: {name} answered with something other than JSON ({ctype})")
        errcode = payload.get("errcode") or 0
        if errcode:
            raise self._error(errcode, payload.get("errmsg"), payload)
        return payload

    def _unreachable(self, exc: requests.RequestException, cut: bool, seconds: float, name: str) -> PlatformError:
        """A call that got no answer, in words: cut at the whole call's deadline, timed out, or not connected."""
        if cut:
            return PlatformError(None, f"platform unreachable: no complete answer within {seconds:.3g} s ({name})")
        if isinstance(exc, requests.Timeout):
            connect = isinstance(exc, requests.ConnectTimeout)
            return PlatformError(
                None, f"platform unreachable: timed out after {_seconds(self.timeout, connect):g} s ({name})"
            )
        if isinstance(exc, requests.ConnectionError):
            return PlatformError(
                None, f"platform unreachable: cannot connect to {urlsplit(self.base_url).netloc} ({name})"
            )
        return PlatformError(None, f"platform unreachable: {type(exc).__name__} ({name})")

    def _read_within_deadline(self, resp, name):
        """The body, read within the read timeout in total (services.outbound) and refused past
        MAX_ANSWER_BYTES: no platform answer is that large, and one that is must not fill the memory."""
        budget = self.timeout[1] if isinstance(self.timeout, (tuple, list)) else self.timeout
        chunks, size = [], 0
        with resp:
            for chunk in body_chunks(resp, time.monotonic() + budget):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise PlatformError(
                        None, f"platform error: {name} answered more than {MAX_ANSWER_BYTES // 2**20} MiB"
                    )
                chunks.append(chunk)
        return b"".join(chunks)

    def _error(self, errcode, errmsg, answer=None):
        try:
            errcode = int(errcode)
        except (TypeError, ValueError, OverflowError):
            errcode = errcode if isinstance(errcode, str) else None  # a list or object keys no rule of ours
        message = self.redact(str(errmsg or "no message"))
        match = _RID.search(message)
        rid = match.group(1) if match else None
        message = _RID.sub("", message).strip() or "no message"
        log.warning("platform %s: error %s: %s (rid %s)", self.account, errcode, message, rid)
        return PlatformError(errcode, message, rid, answer)

    def redact(self, text: str) -> str:
        """text with this client's secret and any token-like query parameter masked."""
        text = _SECRET_PARAM.sub(lambda m: m.group(1) + "=***", text)
        return text.replace(self._secret, "***") if self._secret else text

    # ---- API ----------------------------------------------------------------------------------
    def add_material_image(self, filename: str, data: bytes, content_type: str) -> dict[str, Any]:
        """Permanent image material (cover, image-post image) -> {"media_id", "url"}."""
        kind = image_kind(data)
        if kind is not None:  # the bytes decide: a stored type may be missing or generic
            content_type = KIND_TYPES[kind]
        payload = self._call(
            "/cgi-bin/material/add_material",
            params={"type": "image"},
            files={"media": (upload_name(filename, kind), data, content_type)},
        )
        return {"media_id": _needed(payload, "media_id", "add_material"), "url": payload.get("url")}

    def upload_body_image(self, filename: str, data: bytes, content_type: str | None = None) -> str:
        """Image inside an article body -> its platform URL. The image is first made a jpg/png
        of at most 1 MB (prepare_body_image), so content_type is only a hint."""
        data, content_type, ext = prepare_body_image(data)
        payload = self._call(
            "/cgi-bin/media/uploadimg", files={"media": (upload_name(filename, ext), data, content_type)}
        )
        return _needed(payload, "url", "uploadimg")

    def add_draft(self, articles: list[dict[str, Any]]) -> str:
        """New draft from article dicts (platform field names) -> the draft's media_id."""
        return _needed(self._call("/cgi-bin/draft/add", {"articles": list(articles)}), "media_id", "draft/add")

    def update_draft(self, media_id: str, index: int, article: dict[str, Any]) -> None:
        """Replace article `index` of an existing draft (40007 when the draft is gone)."""
        self._call("/cgi-bin/draft/update", {"media_id": media_id, "index": index, "articles": article})

    def send_preview(self, media_id: str, *, wechat_name: str | None = None, open_id: str | None = None) -> None:
        """Send draft `media_id` to one follower's phone (message/mass/preview, msgtype mpnews)."""
        recipient = {"towxname": wechat_name} if wechat_name else {"touser": open_id}
        self._call(
            "/cgi-bin/message/mass/preview", {**recipient, "mpnews": {"media_id": media_id}, "msgtype": "mpnews"}
        )

    def mass_send(self, media_id: str, client_msg_id: str, tag_id: int | None, ignore_reprint: bool) -> dict[str, Any]:
        """message/mass/sendall of draft `media_id` to every follower or one tag -> {"msg_id", "msg_data_id"}
        (docs/api.md §21). `client_msg_id` makes a repeat safe: the platform answers 45065 to a second one."""
        target = {"is_to_all": True} if tag_id is None else {"is_to_all": False, "tag_id": tag_id}
        payload = self._call(
            "/cgi-bin/message/mass/sendall",
            {
                "filter": target,
                "mpnews": {"media_id": media_id},
                "msgtype": "mpnews",
                "send_ignore_reprint": int(ignore_reprint),
                "clientmsgid": client_msg_id,
            },
        )
        return {
            "msg_id": str(_needed(payload, "msg_id", "sendall")),
            "msg_data_id": str(payload.get("msg_data_id") or "") or None,
        }

    def mass_status(self, msg_id: str) -> str:
        """message/mass/get: SEND_SUCCESS, SENDING, SEND_FAIL or DELETE."""
        return str(self._call("/cgi-bin/message/mass/get", {"msg_id": msg_id}).get("msg_status") or "")

    def follower_tags(self) -> list[dict[str, Any]]:
        """tags/get: the account's follower tags [{"id", "name", "count"}]."""
        tags = self._call("/cgi-bin/tags/get", method="GET").get("tags")
        if not isinstance(tags, list) or not all(isinstance(tag, dict) for tag in tags):
            raise PlatformError(None, "platform error: tags/get answered something other than a list of tags")
        return tags

    def submit_publish(self, media_id: str) -> dict[str, Any]:
        """freepublish/submit: publish draft `media_id` to readers -> {"publish_id", "msg_data_id"}
        (docs/api.md §18). Only a refused token repeats it (the platform took nothing then)."""
        payload = self._call("/cgi-bin/freepublish/submit", {"media_id": media_id})
        return {
            "publish_id": str(_needed(payload, "publish_id", "freepublish/submit")),
            "msg_data_id": str(payload["msg_data_id"]) if payload.get("msg_data_id") else None,
        }

    def publish_status(self, publish_id: str) -> dict[str, Any]:
        """freepublish/get: where a submission stands ({"publish_status", "article_id", "article_detail", ...})."""
        return self._call("/cgi-bin/freepublish/get", {"publish_id": publish_id})

    def article_totals(self, publish_day: str) -> dict[str, Any]:
        """datacube/getarticletotaldetail for the contents published on one day (YYYY-MM-DD, begin = end):
        {"list": each with a `msgid` and a `detail_list` of running totals from that day, "is_delay"}, as
        answered; services/stats/fetching.py reads them (docs/api.md §19)."""
        payload = self._call("/datacube/getarticletotaldetail", {"begin_date": publish_day, "end_date": publish_day})
        return {"list": payload.get("list"), "is_delay": payload.get("is_delay", False)}  # no list: unreadable

    # ---- readers' comments (docs/api.md §5 "Documents, samples and this service"): keyed by a send's
    # msg_data_id and the article's index in it, counted from 0; the platform refuses a page of 50 or more
    # (88010), so the client never asks for one.
    def list_comments(self, msg_data_id: str, index: int, begin: int, count: int, type_: int = 0) -> dict[str, Any]:
        """comment/list: one page of an article's comments, as answered ({"total", "comment": [{"user_comment_id",
        "openid", "create_time", "content", "comment_type", "reply"?}]}); type_ 0 all, 1 ordinary, 2 featured."""
        if not 0 < count < COMMENTS_PAGE_MAX:
            raise ValueError(f"count must be 1 to {COMMENTS_PAGE_MAX - 1} (the platform refuses 50 or more)")
        return self._call(
            "/cgi-bin/comment/list",
            {"msg_data_id": _msg_data_id(msg_data_id), "index": index, "begin": begin, "count": count, "type": type_},
        )

    def open_comments(self, msg_data_id: str, index: int) -> None:
        """comment/open: readers may comment on the article."""
        self._call("/cgi-bin/comment/open", _article(msg_data_id, index))

    def close_comments(self, msg_data_id: str, index: int) -> None:
        """comment/close: readers may no longer comment on the article."""
        self._call("/cgi-bin/comment/close", _article(msg_data_id, index))

    def mark_elect(self, msg_data_id: str, index: int, user_comment_id: int) -> None:
        """comment/markelect: feature a comment (comment_type 1)."""
        self._call("/cgi-bin/comment/markelect", _comment(msg_data_id, index, user_comment_id))

    def unmark_elect(self, msg_data_id: str, index: int, user_comment_id: int) -> None:
        """comment/unmarkelect: a featured comment becomes an ordinary one."""
        self._call("/cgi-bin/comment/unmarkelect", _comment(msg_data_id, index, user_comment_id))

    def delete_comment(self, msg_data_id: str, index: int, user_comment_id: int) -> None:
        """comment/delete: the comment is gone from the article."""
        self._call("/cgi-bin/comment/delete", _comment(msg_data_id, index, user_comment_id))

    def reply_comment(self, msg_data_id: str, index: int, user_comment_id: int, content: str) -> None:
        """comment/reply/add: the account's one reply to a comment (88005 when it has one already)."""
        self._call("/cgi-bin/comment/reply/add", {**_comment(msg_data_id, index, user_comment_id), "content": content})

    def delete_reply(self, msg_data_id: str, index: int, user_comment_id: int) -> None:
        """comment/reply/delete: the account's reply to a comment is removed."""
        self._call("/cgi-bin/comment/reply/delete", _comment(msg_data_id, index, user_comment_id))

    def get_draft(self, media_id: str) -> dict[str, Any]:
        """The platform's answer for one draft: {"news_item": [...], ...}."""
        return self._call("/cgi-bin/draft/get", {"media_id": media_id})

    def batchget_images(self, offset: int, count: int) -> dict[str, Any]:
        """One page of image materials: {"total_count", "item_count", "item": [...]}."""
        payload = self._call("/cgi-bin/material/batchget_material", {"type": "image", "offset": offset, "count": count})
        items, total = payload.get("item") or [], payload.get("total_count") or 0
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items) or type(total) is not int:
            raise PlatformError(
                None, "platform error: material/batchget_material answered a page that is not a count and a list"
            )
        return {"total_count": total, "item_count": len(items), "item": items}

    def iter_image_materials(self, page_size: int = 20) -> Iterator[dict[str, Any]]:
        """Every image material ({media_id, name, update_time, url}), fetched page by page."""
        offset = 0
        while True:
            page = self.batchget_images(offset, page_size)
            yield from page["item"]
            offset += len(page["item"])
            if not page["item"] or offset >= page["total_count"]:
                return


def client_for(account: str, settings: Settings) -> "PlatformClient":
    """The client of `account` from the settings' credentials, base URL and time limit."""
    credentials = settings.wechat_credentials.get(account)
    if credentials is None:
        raise PlatformError(None, f"account {account} has no platform credentials configured")
    return PlatformClient(
        account,
        credentials.appid,
        credentials.secret,
        settings.wechat_api_base,
        timeout=settings.wechat_timeout_seconds,
    )


# The longest the service stores of each (the columns of models/); the platform's are far shorter.
_LONGEST = {"media_id": 128, "msg_id": 64, "publish_id": 64, "url": 4096}


def _needed(payload, key, call):
    """payload[key]; a PlatformError naming `call` when the platform left it out, or gave something other than
    text (an id may be a number) or longer than the service stores (PostgreSQL would refuse to write it)."""
    value = payload.get(key)
    if not value:
        raise PlatformError(None, f"platform error: {call} answered without a {key}")
    number = type(value) is int and key in ("msg_id", "publish_id")
    if not (isinstance(value, str) or number) or len(str(value)) > _LONGEST[key]:
        raise PlatformError(None, f"platform error: {call} answered a {key} that is not one")
    return value


def _msg_data_id(msg_data_id) -> int:
    """The platform's msg_data_id is a number (Uint32 in the documents); the service keeps it as text. One that
    is not cannot be asked about: a failed call in words."""
    number = whole_number(str(msg_data_id), 20)
    if number is None:
        raise PlatformError(None, f"the article's msg_data_id {str(msg_data_id)[:64]!r} is not the platform's number")
    return number


def _article(msg_data_id, index) -> dict[str, int]:
    return {"msg_data_id": _msg_data_id(msg_data_id), "index": int(index)}


def _comment(msg_data_id, index, user_comment_id) -> dict[str, int]:
    return {**_article(msg_data_id, index), "user_comment_id": int(user_comment_id)}


def _name(path):
    return path.removeprefix("/cgi-bin/")


def _seconds(timeout, connect) -> float:
    """The connect or read timeout of a (connect, read) pair or a single number."""
    if isinstance(timeout, (tuple, list)):
        timeout = timeout[0] if connect else timeout[1]
    return float(timeout)
