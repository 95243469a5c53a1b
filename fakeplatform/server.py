"""A fake of the WeChat Official Account API, served over real HTTP on 127.0.0.1.

It speaks the platform's wire format (JSON answers carrying `errcode`/`errmsg` with HTTP 200,
multipart uploads in a `media` field, `access_token` in the query string), keeps every request it
received, stores drafts and materials, and can be told to fail, hang or expire its tokens.
"""

import json
import re
import secrets
import threading
import time

from flask import Flask, Response, abort, request
from werkzeug.serving import WSGIRequestHandler

from fakeplatform.comments import CommentRoutes
from fakeplatform.drafts import DraftRoutes
from fakeplatform.freepublish import FreePublishRoutes
from fakeplatform.latency import Latency
from fakeplatform.masssend import MassSendRoutes
from fakeplatform.rules import (
    BODY_IMAGE_MAX,
    CONTENT_TYPES,
    MATERIAL_IMAGE_MAX,
    TITLE_MAX,
    Fault,
    check_upload_name,
    image_kind,
)
from fakeplatform.threaded import Served

TOKEN_TTL = 7200
# stable_token's forced refresh (fakeplatform/samples/stable_token.json): at most 20 a day, and one less than 30 s after
# the last is not made (the current token is answered); the 21st in a day is refused with 45009.
FORCED_PER_DAY = 20
FORCED_SPACING = 30
RENEW_WITHIN = 300  # seconds: normal mode renews a token this close to its end
_TOKEN_PARAM = re.compile(r"(access_token=)[^&\s]+")


class _QuietTokenHandler(WSGIRequestHandler):
    """Request log lines with the access_token masked (they end up in test and console logs)."""

    def log(self, type, message, *args):
        super().log(type, "%s", _TOKEN_PARAM.sub(r"\1***", message % args if args else message))


class FakePlatform(DraftRoutes, MassSendRoutes, FreePublishRoutes, CommentRoutes, Latency):
    """The platform for a set of accounts (appid -> secret); state lives in memory."""

    def __init__(self, accounts=None):
        self.accounts = dict(accounts or {})  # appid -> secret
        self.requests = []  # every request received, oldest first
        self.drafts = {}  # media_id -> {"appid", "articles": [...], "update_time"}
        self.materials = {}  # media_id -> {"media_id", "name", "url", "update_time", "data", ...}
        self.body_images = {}  # file name -> bytes (media/uploadimg)
        self.material_delay = 0.0  # seconds add_material waits before answering, after the material is stored
        self._tokens = {}  # token -> {"appid", "expires_at", "revoked"}
        self._current = {}  # appid -> token
        self._refused_tokens = set()  # tokens answered 40001 although normal mode still hands them out
        self.forced_refreshes = {}  # appid -> times (time.time()) of the forced refreshes made, oldest first
        self._faults = []  # [{"suffix", "kind", "remaining", ...}]
        self._lock = threading.RLock()
        self._seq = 0
        self._served = None
        self.base_url = None
        self.token_ttl = TOKEN_TTL
        self.previews = []  # {"appid", "towxname" | "touser", "media_id"} of each preview sent
        self.unfollowed = set()  # WeChat IDs / openids that do not follow the account: preview refused
        self.title_limit = TITLE_MAX  # 32: the platform's documents since 2025-12 (45003 past it)
        self.without_comments = set()  # appids without the comment privilege: need_open_comment 1 is 88000
        self._init_freepublish()
        self._init_masssend()
        self._init_comments()
        self.app = self._build_app()

    # ---- control -----------------------------------------------------------------------------
    def add_account(self, appid, secret):
        with self._lock:
            self.accounts[appid] = secret

    def fail_next(
        self, path_suffix, errcode=None, errmsg="system error", times=1, status=200, body=None, content_type="text/html"
    ):
        """The next `times` requests whose path ends with path_suffix fail.

        With errcode: a JSON error answer. With status/body: a raw answer of that status and body
        (HTTP 500 or a non-JSON page, as a proxy in front of the platform may give).
        """
        with self._lock:
            self._faults.append(
                {
                    "suffix": path_suffix,
                    "kind": "fail",
                    "remaining": times,
                    "errcode": errcode,
                    "errmsg": errmsg,
                    "status": status,
                    "body": body,
                    "content_type": content_type,
                }
            )

    def hang_next(self, path_suffix, seconds, times=1):
        """Sleep before handling the next request(s) to path_suffix; the request is then handled."""
        self.hold_next(path_suffix, seconds, times)

    def hold_next(self, path_suffix, most=60.0, times=1):
        """The next request(s) to path_suffix wait before being handled until the returned event is set
        (`most` seconds at most): a test sees the service mid-call for as long as its checks take."""
        released = threading.Event()
        with self._lock:
            self._faults.append(
                {"suffix": path_suffix, "kind": "hang", "remaining": times, "seconds": most, "released": released}
            )
        return released

    def expire_tokens(self):
        """Every token issued so far expires now (the platform then answers 42001)."""
        with self._lock:
            for info in self._tokens.values():
                info["expires_at"] = 0

    def refuse_token(self, token):
        """Calls with `token` get 40001 while stable_token's normal mode still answers it as current (the
        platform's view of a token can differ from its holders'): only a forced refresh replaces it."""
        with self._lock:
            self._refused_tokens.add(token)

    def seed_image_material(self, name, data, appid=None):
        """An image material as if uploaded earlier (appid None: visible to every account)."""
        with self._lock:
            return self._store_material(appid, name, data, image_kind(data) or "png")

    def requests_to(self, path_suffix):
        return [r for r in self.requests if r["path"].endswith(path_suffix)]

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self, port=0, host="127.0.0.1"):
        """Serve in a daemon thread; returns the base URL (http://127.0.0.1:<port>)."""
        self._served = Served(self.app, host, port, handler=_QuietTokenHandler, name="fake-platform")
        self._set_base_url(self._served.url)
        return self.base_url

    def serve_forever(self, port, host="127.0.0.1"):
        """Serve until interrupted (python -m fakeplatform)."""
        self.start(port, host)
        assert self._served is not None
        self._served.wait()

    def _set_base_url(self, base_url):
        with self._lock:
            self.base_url = base_url
            for m in self.materials.values():  # seeded before start
                m["url"] = f"{base_url}/mmbiz/{m['file']}"

    def stop(self):
        self.release_sendall()
        if self._served is not None:
            self._served.stop()
            self._served = None

    # ---- state helpers (called with the lock held) -------------------------------------------
    def _new_id(self, prefix):
        self._seq += 1
        return f"{prefix}{self._seq:04d}{secrets.token_hex(10)}"

    def _store_material(self, appid, name, data, kind):
        media_id = self._new_id("MEDIA_")
        record = {
            "media_id": media_id,
            "appid": appid,
            "name": name,
            "data": data,
            "content_type": CONTENT_TYPES[kind],
            "file": f"{media_id}.{kind}",
            "url": f"{self.base_url}/mmbiz/{media_id}.{kind}",
            "update_time": int(time.time()),
            "seq": self._seq,
        }
        self.materials[media_id] = record
        return record

    def _issue_token(self, appid, revoke=True):
        old = self._current.get(appid)
        if old and revoke:
            self._tokens[old]["revoked"] = True
        token = "TOKEN_" + secrets.token_urlsafe(24)
        self._tokens[token] = {"appid": appid, "expires_at": time.time() + self.token_ttl, "revoked": False}
        self._current[appid] = token
        return token

    def _appid_for(self, token):
        info = self._tokens.get(token or "")
        if not token:
            raise Fault(41001, "access_token missing")
        if info is None or info["revoked"] or token in self._refused_tokens:
            raise Fault(40001, "invalid credential, access_token is invalid or not latest")
        if info["expires_at"] <= time.time():
            raise Fault(42001, "access_token expired")
        return info["appid"]

    def _media_ok(self, appid, media_id):
        m = self.materials.get(media_id) if isinstance(media_id, str) else None
        return m is not None and m["appid"] in (None, appid)

    def _take_fault(self, path, kind):
        with self._lock:
            for fault in self._faults:
                if fault["kind"] == kind and fault["remaining"] > 0 and path.endswith(fault["suffix"]):
                    fault["remaining"] -= 1
                    return fault
        return None

    # ---- routes -------------------------------------------------------------------------------
    def _build_app(self):
        app = Flask("fakeplatform")
        routes = {
            "/cgi-bin/material/add_material": self._add_material,
            "/cgi-bin/media/uploadimg": self._uploadimg,
            "/cgi-bin/draft/add": self._draft_add,
            "/cgi-bin/draft/update": self._draft_update,
            "/cgi-bin/draft/get": self._draft_get,
            "/cgi-bin/material/batchget_material": self._batchget,
            "/cgi-bin/message/mass/preview": self._preview,
            "/cgi-bin/message/mass/sendall": self._sendall,
            "/cgi-bin/message/mass/get": self._mass_get,
            "/cgi-bin/tags/get": self._tags_get,
            "/cgi-bin/freepublish/submit": self._freepublish_submit,
            "/cgi-bin/freepublish/get": self._freepublish_get,
            "/datacube/getarticletotaldetail": self._article_totals,
            "/cgi-bin/comment/list": self._comment_list,
            "/cgi-bin/comment/open": self._comment_open,
            "/cgi-bin/comment/close": self._comment_close,
            "/cgi-bin/comment/markelect": self._comment_markelect,
            "/cgi-bin/comment/unmarkelect": self._comment_unmarkelect,
            "/cgi-bin/comment/delete": self._comment_delete,
            "/cgi-bin/comment/reply/add": self._comment_reply_add,
            "/cgi-bin/comment/reply/delete": self._comment_reply_delete,
        }

        def answer(payload, content_type="application/json; encoding=utf-8"):
            if "errcode" in payload and payload["errcode"] != 0:
                payload["errmsg"] += f" rid: {secrets.token_hex(4)}-{secrets.token_hex(8)}"
            kept = request.environ.get("fakeplatform.record")
            if kept is not None:  # what was answered, beside what was received (tests/platform/test_fake_samples.py)
                kept["answer"] = json.loads(json.dumps(payload))
            return Response(json.dumps(payload, ensure_ascii=False).encode("utf-8"), content_type=content_type)

        @app.route("/datacube/<path:name>", methods=["GET", "POST"])
        @app.route("/cgi-bin/<path:name>", methods=["GET", "POST"])
        def api(name):
            path, raw = request.path, request.get_data(cache=True)
            multipart = bool(request.files or request.form)
            body = None
            if raw and not multipart:
                try:
                    body = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    body = None
            record = {
                "method": request.method,
                "path": path,
                "time": time.time(),
                "query": request.args.to_dict(),
                "content_type": request.content_type,
                "body": None if multipart else raw,
                "json": body,
                "form": request.form.to_dict(),
                "files": {
                    k: {"filename": f.filename, "content_type": f.content_type, "data": f.read()}
                    for k, f in request.files.items()
                },
            }
            with self._lock:
                self.requests.append(record)
            request.environ["fakeplatform.record"] = record
            self._delay(path)
            hang = self._take_fault(path, "hang")
            if hang:
                hang["released"].wait(hang["seconds"])
            fault = self._take_fault(path, "fail")
            if fault and fault["errcode"] is None:
                return Response(fault["body"] or "", status=fault["status"], content_type=fault["content_type"])
            if fault:
                return answer({"errcode": fault["errcode"], "errmsg": fault["errmsg"]})
            try:
                if raw and not multipart and body is None:
                    raise Fault(47001, "data format error")
                if path == "/cgi-bin/stable_token":
                    return answer(self._stable_token(body))
                handler = routes.get(path)
                if handler is None:
                    abort(404)
                with self._lock:
                    appid = self._appid_for(request.args.get("access_token"))
                    result = handler(appid, body if isinstance(body, dict) else {}, record)
                late = record.get("answer_after")  # handled, answered late (sendall_delay, or held: hold_sendall)
                if callable(late):
                    late()
                elif isinstance(late, int | float) and late > 0:
                    time.sleep(late)
                # draft/get answers as text/plain without a charset, as some real endpoints do
                return answer(
                    result, "text/plain" if path.endswith("draft/get") else "application/json; encoding=utf-8"
                )
            except Fault as exc:
                return answer({"errcode": exc.errcode, "errmsg": exc.errmsg})

        @app.route("/s/<article_id>")
        def article_page(article_id):
            page = self._article_page(article_id)
            if page is None:
                abort(404)
            return Response(page, content_type="text/html; charset=utf-8")

        @app.route("/mmbiz/<name>")
        def mmbiz(name):
            media_id = name.rsplit(".", 1)[0]
            with self._lock:
                item = self.materials.get(media_id)
                data = item["data"] if item else self.body_images.get(name)
            if data is None:
                abort(404)
            kind = image_kind(data) or "png"
            return Response(data, content_type=CONTENT_TYPES[kind])

        return app

    def _stable_token(self, body):
        if not isinstance(body, dict) or body.get("grant_type") != "client_credential":
            raise Fault(40002, "invalid grant_type")
        appid = body.get("appid")
        with self._lock:
            if appid not in self.accounts:
                raise Fault(40013, "invalid appid")
            if body.get("secret") != self.accounts[appid]:
                raise Fault(40125, "invalid appsecret")
            token = self._current.get(appid)
            info = self._tokens.get(token)
            now = time.time()
            # Normal mode: the current token, a new one in its last RENEW_WITHIN seconds (the old one still
            # good until it expires): stable_token's page, so expires_in is never below that.
            renew, revoke = not info or info["expires_at"] - now < RENEW_WITHIN, False
            if body.get("force_refresh"):
                forced = self.forced_refreshes.setdefault(appid, [])
                if len([at for at in forced if at > now - 86400]) >= FORCED_PER_DAY:
                    raise Fault(45009, "reach max api daily quota limit")
                if not forced or now - forced[-1] >= FORCED_SPACING:
                    forced.append(now)
                    renew = revoke = True  # a forced one ends every other holder's token at once
            if renew:
                token = self._issue_token(appid, revoke)
            expires_at = self._tokens[token]["expires_at"]
            return {"access_token": token, "expires_in": max(0, round(expires_at - now))}

    @staticmethod
    def _upload(record):
        upload = record["files"].get("media")
        if upload is None or not upload["data"]:
            raise Fault(41005, "media data missing")
        return upload["filename"] or "", upload["data"]

    def _add_material(self, appid, _body, record):
        record["answer_after"] = self.material_delay
        if request.args.get("type") != "image":
            raise Fault(40004, "invalid media type")
        name, data = self._upload(record)
        check_upload_name(name, "material")
        kind = image_kind(data)
        if kind is None:
            raise Fault(40005, "invalid file type")
        if len(data) > MATERIAL_IMAGE_MAX:
            raise Fault(40009, "invalid image size")
        record = self._store_material(appid, name, data, kind)
        return {"media_id": record["media_id"], "url": record["url"], "item": []}

    def _uploadimg(self, _appid, _body, record):
        name, data = self._upload(record)
        check_upload_name(name, "uploadimg")
        kind = image_kind(data)
        if kind not in ("jpg", "png"):
            raise Fault(40005, "invalid file type")
        if len(data) > BODY_IMAGE_MAX:
            raise Fault(40009, "invalid image size")
        name = f"{self._new_id('IMG_')}.{kind}"
        self.body_images[name] = data
        return {"url": f"{self.base_url}/mmbiz/{name}"}

    def _batchget(self, appid, body, _record=None):
        if body.get("type") != "image":
            raise Fault(40004, "invalid media type")
        offset, count = body.get("offset"), body.get("count")
        if not isinstance(offset, int) or offset < 0 or not isinstance(count, int) or not 1 <= count <= 20:
            raise Fault(47003, "argument invalid! hint: offset/count")
        mine = sorted(
            (m for m in self.materials.values() if m["appid"] in (None, appid)), key=lambda m: m["seq"], reverse=True
        )
        page = [{k: m[k] for k in ("media_id", "name", "update_time", "url")} for m in mine[offset : offset + count]]
        return {"total_count": len(mine), "item_count": len(page), "item": page}
