"""The platform calls of one publish (docs/api.md §5): images, the draft body, then draft/add or draft/update.

Runs with no database transaction open. Raises PlatformError, image_uploads.PublishFailed or
ContentTooLarge, each one line for the job's lastError.
"""

import logging
from typing import Any

from flask_babel import force_locale

from rules.accounts import setting_prefix
from rules.labels import publish_failure
from rules.limits import PLATFORM_TITLE_CHARS
from services.platform.client import PlatformError
from services.publishing.image_uploads import JobImages, Needed
from services.rendering import check_size, image_urls, render_article

log = logging.getLogger(__name__)
INVALID_MEDIA_ID = 40007
NO_COMMENT_PRIVILEGE = 88000
TITLE_REFUSED = 45003


def build_article(
    images: JobImages, content_type: str, snapshot: dict[str, Any], comments: bool = True
) -> dict[str, Any]:
    """The draft article of `snapshot`, its images uploaded first, concurrently (every platform call
    but the draft's); the article is then put together in order from the upload cache, exactly as
    with one upload after another (docs/api.md §12). `comments` False: the account lacks the comment
    privilege, so comments are sent off whatever the snapshot chose (docs/api.md §5)."""
    images.upload_all(needed_images(images, content_type, snapshot))
    if content_type == "image_post":
        return image_post_article(images, snapshot, comments)
    return news_article(images, snapshot)


def needed_images(images: JobImages, content_type: str, snapshot: dict[str, Any]) -> list[Needed]:
    """Every image the draft needs, in the article's order."""
    if content_type == "image_post":
        return [
            (images.asset({"assetId": image["assetId"]}, f"image {index}"), "material", f"image {index}")
            for index, image in enumerate(snapshot["images"], 1)
        ]
    return [(images.asset(snapshot["coverImage"], "cover image"), "material", "cover image")] + [
        (images.asset(src, "body image"), "uploadimg", f"body image {index}")
        for index, src in enumerate(image_urls(snapshot["bodyMarkdown"]), 1)
    ]


def news_article(images: JobImages, snapshot: dict[str, Any]) -> dict[str, Any]:
    thumb_media_id = images.material_id(images.asset(snapshot["coverImage"], "cover image"))
    image_map = {src: images.body_url(images.asset(src, "body image")) for src in image_urls(snapshot["bodyMarkdown"])}
    html = render_article(snapshot["bodyMarkdown"], snapshot["themeTemplate"], snapshot["themeConfig"], image_map)
    check_size(html)  # before the draft call: the platform would answer 45002 with less to go on
    article = {"title": snapshot["title"]}
    if snapshot.get("author"):
        article["author"] = snapshot["author"]
    article.update({"digest": snapshot.get("summary") or "", "content": html, "thumb_media_id": thumb_media_id})
    return article


def image_post_article(images: JobImages, snapshot: dict[str, Any], comments: bool = True) -> dict[str, Any]:
    media_ids = [
        images.material_id(images.asset({"assetId": image["assetId"]}, f"image {index}"))
        for index, image in enumerate(snapshot["images"], 1)
    ]
    settings = snapshot["commentSettings"]
    return {
        "article_type": "newspic",
        "title": snapshot["title"],
        "content": snapshot["description"],
        "image_info": {"image_list": [{"image_media_id": media_id} for media_id in media_ids]},
        "cover_info": {"crop_percent_list": [crop_box(box) for box in snapshot["coverCrop"]["cropPercentList"]]},
        "need_open_comment": 1 if settings["needOpenComment"] and comments else 0,
        "only_fans_can_comment": 1 if settings["onlyFansCanComment"] else 0,
    }


def crop_box(box: dict[str, Any]) -> dict[str, Any]:
    """{"ratio": "3_4", "x1": "0.1", ...}: the platform takes coordinates as strings."""
    return {"ratio": box["ratio"], **{key: coordinate(box[key]) for key in ("x1", "y1", "x2", "y2")}}


def coordinate(value: float) -> str:
    """0.1 -> "0.1", 1 -> "1", 1/3 -> "0.333333" (at most 6 decimals, no trailing zeros)."""
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def refusal(exc: PlatformError, account: str, snapshot: dict[str, Any]) -> str:
    """The job's lastError for a refused draft: 88000 and 45003 in words that say what to do (docs/api.md §5
    "Comments privilege", "Titles"; rules/labels.py PUBLISH_FAILURE_LABELS), else the platform's own."""
    with force_locale("en"):
        if exc.errcode == NO_COMMENT_PRIVILEGE:
            return publish_failure("errcode_88000", setting=setting_prefix(account) + "_COMMENTS")
        if exc.errcode == TITLE_REFUSED:
            title = str(snapshot.get("title") or "")
            return publish_failure("errcode_45003", title=title, length=len(title), limit=PLATFORM_TITLE_CHARS)
    return str(exc)


def save_draft(images: JobImages, article: dict[str, Any], draft_media_id: str | None) -> str:
    """draft/update of an existing draft (40007: it is gone, so draft/add), else draft/add."""
    if draft_media_id:
        images.touch()
        try:
            images.client.update_draft(draft_media_id, 0, article)
            return draft_media_id
        except PlatformError as exc:
            if exc.errcode != INVALID_MEDIA_ID:
                raise
            log.info("platform %s: draft %s is gone (40007); adding a new one", images.account, draft_media_id)
    images.touch()
    try:
        return images.client.add_draft([article])
    except PlatformError as exc:
        if exc.errcode == INVALID_MEDIA_ID:
            # A cached material was deleted on the platform: the next attempt uploads it again.
            images.forget_materials()
        raise
