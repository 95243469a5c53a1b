"""The draft routes of the fake platform: draft/add, draft/update, draft/get (news and newspic)."""
import json
import time

from fakeplatform.rules import Fault, check_article


class DraftRoutes:
    """Mixed into FakePlatform, which provides drafts, base_url, _new_id and _media_ok."""

    def _draft_add(self, appid, body, _record=None):
        articles = body.get("articles")
        if not isinstance(articles, list) or not articles:
            raise Fault(47003, "argument invalid! hint: articles")
        for art in articles:
            check_article(art, lambda m: self._media_ok(appid, m))
        media_id = self._new_id("DRAFT_")
        self.drafts[media_id] = {"appid": appid, "articles": json.loads(json.dumps(articles)),
                                 "update_time": int(time.time())}
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
        check_article(article, lambda m: self._media_ok(appid, m))
        draft["articles"][index] = json.loads(json.dumps(article))
        draft["update_time"] = int(time.time())
        return {"errcode": 0, "errmsg": "ok"}

    def _draft_get(self, appid, body, _record=None):
        draft = self._draft(appid, body.get("media_id"))
        items = [dict(a, url=f"{self.base_url}/s/{body['media_id']}/{i}")
                 for i, a in enumerate(draft["articles"])]
        return {"news_item": items, "create_time": draft["update_time"],
                "update_time": draft["update_time"]}
