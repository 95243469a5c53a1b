"""The draft routes of the fake platform: draft/add, draft/update, draft/get (news and newspic), and
message/mass/preview, which sends a draft to one follower's phone."""

import json
import time
from collections.abc import Callable
from typing import Any

from fakeplatform.rules import Fault, check_article

# What draft/get answers for an article whatever draft/add was given (fakeplatform/samples/draft_get.json).
NEWS_DEFAULTS = {
    "article_type": "news",
    "author": "",
    "digest": "",
    "content_source_url": "",
    "show_cover_pic": 0,
    "need_open_comment": 0,
    "only_fans_can_comment": 0,
}
NEWSPIC_DEFAULTS = {"article_type": "newspic", "need_open_comment": 0, "only_fans_can_comment": 0}


def stored_article(article):
    """An article as draft/get gives it back: the platform's defaults filled in; an image post's cover
    (thumb_media_id) is its first image."""
    if article.get("article_type") == "newspic":
        images = (article.get("image_info") or {}).get("image_list") or [{}]
        return {**NEWSPIC_DEFAULTS, "thumb_media_id": images[0].get("image_media_id", ""), **article}
    return {**NEWS_DEFAULTS, **article}


class DraftRoutes:
    """Mixed into FakePlatform, which provides drafts, previews, unfollowed, base_url, _new_id and _media_ok."""

    drafts: dict[str, dict[str, Any]]
    previews: list[dict[str, Any]]
    unfollowed: set[str]
    base_url: str | None
    _seq: int
    _new_id: Callable[[str], str]
    _media_ok: Callable[[str, Any], bool]
    title_limit: int  # characters draft/add and draft/update take in a title (45003 past it)
    without_comments: set[str]  # appids without the comment privilege (88000 to need_open_comment 1)

    def _check(self, appid, art):
        check_article(art, lambda m: self._media_ok(appid, m), self.title_limit, appid not in self.without_comments)

    def _draft_add(self, appid, body, _record=None):
        articles = body.get("articles")
        if not isinstance(articles, list) or not articles:
            raise Fault(47003, "argument invalid! hint: articles")
        for art in articles:
            self._check(appid, art)
        media_id = self._new_id("DRAFT_")
        self.drafts[media_id] = {
            "appid": appid,
            "articles": json.loads(json.dumps(articles)),
            "update_time": int(time.time()),
        }
        return {"media_id": media_id}

    def _draft(self, appid, media_id):
        draft = self.drafts.get(media_id) if isinstance(media_id, str) else None
        if draft is None or draft["appid"] != appid:
            raise Fault(40007, "invalid media_id")
        return draft

    def _draft_update(self, appid, body, _record=None):
        draft = self._draft(appid, body.get("media_id"))
        index, article = body.get("index"), body.get("articles")
        if not isinstance(article, dict):
            raise Fault(47001, "data format error")
        if not isinstance(index, int) or not 0 <= index < len(draft["articles"]):
            raise Fault(47003, "argument invalid! hint: index")
        self._check(appid, article)
        draft["articles"][index] = json.loads(json.dumps(article))
        draft["update_time"] = int(time.time())
        return {"errcode": 0, "errmsg": "ok"}

    def _draft_get(self, appid, body, _record=None):
        draft = self._draft(appid, body.get("media_id"))
        items = [
            dict(stored_article(a), url=f"{self.base_url}/s/{body['media_id']}/{i}")
            for i, a in enumerate(draft["articles"])
        ]
        return {"news_item": items, "create_time": draft["update_time"], "update_time": draft["update_time"]}

    def _remove_draft(self, media_id):
        """The platform removes a draft once it is published or mass-sent (draft/add's page): draft/get,
        draft/update, freepublish/submit, preview and sendall of it then answer 40007."""
        self.drafts.pop(media_id, None)

    def _preview(self, appid, body, _record=None):
        """message/mass/preview: a draft (mpnews) sent to one follower's phone, by WeChat ID or openid."""
        recipients = {key: body.get(key) for key in ("towxname", "touser") if body.get(key) is not None}
        if len(recipients) != 1 or not all(isinstance(v, str) and v for v in recipients.values()):
            raise Fault(40003, "invalid openid hint: towxname or touser")
        if body.get("msgtype") != "mpnews":
            raise Fault(40008, "invalid message type")
        media_id = (body.get("mpnews") or {}).get("media_id") if isinstance(body.get("mpnews"), dict) else None
        draft = self.drafts.get(media_id) if isinstance(media_id, str) else None
        if draft is None or draft["appid"] != appid:
            raise Fault(40007, "invalid media_id")
        [(key, recipient)] = recipients.items()
        if recipient in self.unfollowed:
            raise Fault(43004, "require subscribe hint: the user does not follow the account")
        self.previews.append({"appid": appid, key: recipient, "media_id": media_id})
        return {"errcode": 0, "errmsg": "preview success", "msg_id": self._seq}
