"""Checks of selection values: references resolve, cover ratio, crop box, completeness, limits.

Every check adds messages to a `Problems` map of dotted path -> messages; the caller raises once per
stage so one answer lists everything wrong at that stage (docs/api.md §2 `details`).
"""

from collections.abc import Iterable
from typing import Any

from rules.limits import APPROVAL_AUTHOR_MAX, APPROVAL_SUMMARY_MAX
from rules.vocabulary import REQUIRED_SELECTION_KEYS, SELECTION_KEYS
from services.asset_refs import markdown_image_refs, ref_key, resolve_ref
from services.errors import ValidationFailed

CROP_RATIO = 3 / 4
CROP_TOLERANCE = 0.02
DEFAULT_COVER_RATIO = (1.0, 2.5)
REF_KEYS = ("coverImage",)
REF_LIST_KEYS = ("bodyImages", "images")


class Problems(dict):
    def add(self, path: str, message: str) -> None:
        self.setdefault(path, []).append(message)

    def raise_if_any(self, summary: str) -> None:
        if self:
            path, messages = next(iter(self.items()))
            raise ValidationFailed(f"{summary}: {path}: {messages[0]}", dict(self))


def join(prefix: str, key: str | int) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


class Assets:
    """Resolves references once per request (a decision may name the same image many times)."""

    def __init__(self):
        self._cache = {}

    def get(self, ref: Any) -> Any:
        key = ref_key(ref)
        if key is None:
            return None
        if key not in self._cache:
            self._cache[key] = resolve_ref(ref)
        return self._cache[key]

    def identity(self, ref: Any) -> Any:
        """The asset id a reference resolves to (URL and {"assetId"} forms compare equal)."""
        asset = self.get(ref)
        return asset.asset_id if asset else ("unresolved", repr(ref))


def same_value(assets: "Assets", key: str, left: Any, right: Any) -> bool:
    if key in REF_KEYS:
        return assets.identity(left) == assets.identity(right)
    if key in REF_LIST_KEYS:
        left, right = left or [], right or []
        if len(left) != len(right):
            return False
        return all(assets.identity(a) == assets.identity(b) for a, b in zip(left, right, strict=True))
    return left == right


def check_foreign(
    data: dict[str, Any], allowed: Iterable[str], content_type: str, prefix: str, problems: "Problems"
) -> None:
    for key in data or {}:
        if key not in allowed:
            problems.add(join(prefix, key), f"not a field of {content_type} selections")


def check_complete(
    selections: dict[str, Any], content_type: str, prefix: str, problems: "Problems", may_be_absent: Iterable[str] = ()
) -> None:
    for key in REQUIRED_SELECTION_KEYS[content_type]:
        value = (selections or {}).get(key)
        if value is None and key not in may_be_absent:
            problems.add(join(prefix, key), f"required: complete {content_type} selections include {key}")
    check_not_blank(selections or {}, content_type, prefix, problems)


def check_not_blank(selections: dict[str, Any], content_type: str, prefix: str, problems: "Problems") -> None:
    """A required text that is given has content (a partial selections object, e.g. a PATCH)."""
    for key in REQUIRED_SELECTION_KEYS[content_type]:
        value = selections.get(key)
        if isinstance(value, str) and not value.strip():
            problems.add(join(prefix, key), "must not be empty")


def check_ref(assets: "Assets", ref: Any, path: str, problems: "Problems") -> Any:
    asset = assets.get(ref)
    if asset is None:
        shown = ref.get("assetId") if isinstance(ref, dict) else ref
        problems.add(path, f"{shown!r} is not a known asset; upload it with POST /api/assets/upload first")
    return asset


def check_markdown_links(assets: "Assets", markdown: str | None, path: str, problems: "Problems") -> None:
    for url in markdown_image_refs(markdown):
        if assets.get(url) is None:
            problems.add(path, f"image link {url!r} is not an asset url; upload the image and link its url")


def check_cover(assets: "Assets", ref: Any, path: str, problems: "Problems", cover_ratio: tuple[float, float]) -> None:
    asset = check_ref(assets, ref, path, problems)
    if asset is None:
        return
    if not asset.width or not asset.height:
        problems.add(path, "the cover is not a decodable image")
        return
    low, high = cover_ratio
    ratio = asset.width / asset.height
    if not low <= ratio <= high:
        problems.add(
            path,
            f"the cover is {asset.width}x{asset.height} (width/height {ratio:.2f}); "
            f"a cover needs width/height between {low} and {high}",
        )


def crop_fits_images(crop: dict[str, Any], images: list | None) -> bool:
    """coverCrop.assetId must be the first selected image: the platform uses that image as the cover."""
    return not images or crop["assetId"] == images[0].get("assetId")


def check_cover_crop(
    assets: "Assets", crop: dict[str, Any], images: list | None, path: str, problems: "Problems"
) -> None:
    if not crop_fits_images(crop, images):
        problems.add(join(path, "assetId"), "must be the first selected image (the platform uses it as the cover)")
    asset = check_ref(assets, {"assetId": crop["assetId"]}, join(path, "assetId"), problems)
    if asset is None or not asset.width or not asset.height:
        return
    for index, box in enumerate(crop["cropPercentList"]):
        width_px = (box["x2"] - box["x1"]) * asset.width
        height_px = (box["y2"] - box["y1"]) * asset.height
        ratio = width_px / height_px
        if abs(ratio - CROP_RATIO) / CROP_RATIO > CROP_TOLERANCE:
            problems.add(
                join(path, f"cropPercentList.{index}"),
                f"the box is {width_px:.0f}x{height_px:.0f} px of a {asset.width}x{asset.height} image "
                f"(width/height {ratio:.3f}); a 3_4 crop needs 0.75 within 2%",
            )


def check_values(
    assets: "Assets",
    selections: dict[str, Any],
    prefix: str,
    problems: "Problems",
    *,
    keys: Iterable[str] | None = None,
    approval: bool = False,
    cover_ratio: tuple[float, float] = DEFAULT_COVER_RATIO,
    context: dict[str, Any] | None = None,
    refs_only: bool = False,
) -> None:
    """Value rules of the selection keys in `keys` (default: every key given); `context` is the whole
    selections object (for coverCrop vs images); `refs_only` checks only that references resolve (a rejected
    value may fail the other rules: that can be why it is rejected)."""
    context = context if context is not None else selections
    for key in keys if keys is not None else list(selections):
        if key not in selections:
            continue
        value, path = selections[key], join(prefix, key)
        if key == "summary" and approval and not refs_only and len(value) > APPROVAL_SUMMARY_MAX:
            problems.add(path, f"at most {APPROVAL_SUMMARY_MAX} characters at approval (now {len(value)})")
        elif key == "author" and approval and not refs_only and len(value) > APPROVAL_AUTHOR_MAX:
            problems.add(
                path, f"at most {APPROVAL_AUTHOR_MAX} characters at approval, the platform's limit (now {len(value)})"
            )
        elif key == "body":
            check_markdown_links(assets, value, path, problems)
        elif key == "bodyImages" or key == "images":
            for index, ref in enumerate(value):
                check_ref(assets, ref, join(path, index if key == "bodyImages" else f"{index}.assetId"), problems)
        elif key == "coverImage" and refs_only:
            check_ref(assets, value, path, problems)
        elif key == "coverImage":
            check_cover(assets, value, path, problems, cover_ratio)
        elif key == "coverCrop" and refs_only:
            check_ref(assets, {"assetId": value["assetId"]}, join(path, "assetId"), problems)
        elif key == "coverCrop":
            check_cover_crop(assets, value, context.get("images"), path, problems)


def check_approval_ready(
    assets: "Assets",
    task: Any,
    selections: dict[str, Any],
    body_draft: dict[str, Any] | None,
    prefix: str = "selections",
    cover_ratio: tuple[float, float] = DEFAULT_COVER_RATIO,
) -> "Problems":
    """Completeness, limits and references at approval level; returns the Problems found."""
    problems = Problems()
    check_foreign(selections, SELECTION_KEYS[task.content_type], task.content_type, prefix, problems)
    check_complete(selections, task.content_type, prefix, problems)
    check_values(assets, selections, prefix, problems, approval=True, cover_ratio=cover_ratio)
    if task.content_type == "article" and selections.get("body") is not None:
        if not body_draft or body_draft.get("markdown") != selections["body"]:
            problems.add(join(prefix, "body"), "does not match the saved bodyDraft; patch body again")
    return problems
