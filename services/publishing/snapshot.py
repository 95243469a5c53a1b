"""The frozen content of a publish job, built once from the task's selections and bodyDraft; a retry
publishes the snapshot of the job it retries. Its fields: docs/api.md §5 ("Snapshot")."""

from typing import Any

from models.review import ReviewTask
from rules.vocabulary import REQUIRED_SELECTION_KEYS
from services.asset_refs import resolve_ref
from services.rendering import render_article, theme_config


class SnapshotError(Exception):
    """The task cannot be turned into a publishable snapshot; str() says what is missing."""


def build_snapshot(task: ReviewTask, account_theme_overrides: dict[str, str] | None = None) -> dict[str, Any]:
    """The snapshot of `task` (a ReviewTask row) as it stands; raises SnapshotError."""
    selections = task.selections or {}
    missing = [key for key in REQUIRED_SELECTION_KEYS[task.content_type] if selections.get(key) in (None, "")]
    if missing:
        raise SnapshotError(
            f"the task has no publishable selections: {', '.join(missing)} missing; "
            "approve it with complete selections first"
        )
    if task.content_type == "image_post":
        return _image_post(selections)
    return _article(task, selections, account_theme_overrides)


def _asset_of(ref, what):
    asset = resolve_ref(ref)
    if asset is None:
        shown = ref.get("assetId") if isinstance(ref, dict) else ref
        raise SnapshotError(f"{what} {shown!r} is not a known asset; select an uploaded image")
    return asset


def _article(task, selections, account_theme_overrides):
    draft = task.body_draft
    if not draft or not isinstance(draft.get("markdown"), str) or not draft["markdown"].strip():
        raise SnapshotError("the task has no body draft to publish; approve it with a body first")
    if draft["markdown"] != selections["body"]:
        raise SnapshotError("the body draft differs from selections.body; save the body again")
    template = draft.get("themeTemplate") or "default"
    try:
        config = theme_config(template, account_theme_overrides)
        if draft.get("themeConfig"):
            variables = draft["themeConfig"].get("cssVariables", draft["themeConfig"])
            config = theme_config(template, {**config["cssVariables"], **variables})
        html = render_article(draft["markdown"], template, config)
    except (ValueError, AttributeError) as exc:
        raise SnapshotError(f"the theme cannot be applied: {exc}") from None
    snapshot = {"title": selections["title"]}
    if selections.get("author"):
        snapshot["author"] = selections["author"]
    snapshot.update(
        {
            "summary": selections.get("summary") or "",
            "themeTemplate": template,
            "themeConfig": config,
            "bodyMarkdown": draft["markdown"],
            "bodyHtml": html,
            "bodyImages": [_asset_of(ref, "body image").url for ref in selections.get("bodyImages") or []],
            "coverImage": _asset_of(selections["coverImage"], "cover image").url,
            "sourceBodyCandidate": draft.get("sourceBodyCandidate") or "",
            "bodyEditedFromCandidate": bool(draft.get("bodyEditedFromCandidate")),
        }
    )
    return snapshot


def _image_post(selections):
    assets = [_asset_of(ref, "image") for ref in selections["images"]]
    images = [{"assetId": asset.asset_id, "url": asset.url} for asset in assets]
    if not 1 <= len(images) <= 20:
        raise SnapshotError(f"an image post needs 1 to 20 images, not {len(images)}")
    crop = selections["coverCrop"]
    if crop.get("assetId") != images[0]["assetId"]:
        raise SnapshotError("coverCrop must crop the first selected image; select the crop again")
    settings = selections["commentSettings"]
    return {
        "title": selections["title"],
        "description": selections["description"],
        "images": images,
        "coverCrop": {"assetId": crop["assetId"], "cropPercentList": [dict(box) for box in crop["cropPercentList"]]},
        "commentSettings": {
            "needOpenComment": bool(settings.get("needOpenComment")),
            "onlyFansCanComment": bool(settings.get("onlyFansCanComment")),
        },
    }
