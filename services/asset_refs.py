"""Resolve asset references ({"assetId"} or an asset URL) and find them in Markdown and in tasks."""

from typing import Any

from models import Asset
from services.rendering import image_urls

REF_FIELDS = ("coverImage", "bodyImages", "images")


def ref_key(ref: Any) -> tuple[str, str] | None:
    """The lookup key of a reference: ('id', value) or ('url', value); None when not a reference."""
    if isinstance(ref, dict) and isinstance(ref.get("assetId"), str):
        return ("id", ref["assetId"])
    if isinstance(ref, str) and ref:
        return ("url", ref)
    return None


def resolve_ref(ref: Any) -> Any:
    """The Asset a reference names, or None."""
    key = ref_key(ref)
    if key is None:
        return None
    if key[0] == "id":
        return Asset.get_or_none(Asset.asset_id == key[1])
    return Asset.select().where(Asset.url == key[1]).order_by(Asset.id).first()


def resolve_many(refs: list) -> dict[int, Any]:
    """{index: Asset or None} for a list of references, in two queries at most."""
    keys = [ref_key(r) for r in refs]
    ids = {k[1] for k in keys if k and k[0] == "id"}
    urls = {k[1] for k in keys if k and k[0] == "url"}
    by_id = {a.asset_id: a for a in Asset.select().where(Asset.asset_id.in_(ids))} if ids else {}
    # Oldest last, so it wins a URL two assets share (as in resolve_ref).
    by_url = {a.url: a for a in Asset.select().where(Asset.url.in_(urls)).order_by(Asset.id.desc())} if urls else {}
    return {
        index: None if key is None else (by_id if key[0] == "id" else by_url).get(key[1])
        for index, key in enumerate(keys)
    }


def markdown_image_refs(markdown: str | None) -> list[str]:
    """Every image link target in Markdown, in order of first appearance."""
    return image_urls(markdown or "")


def _listed(value):
    return value if isinstance(value, list) else [] if value is None else [value]


def _refs_of_selections(selections, out):
    """Asset refs and Markdown image links in a selections-like object (selections, lockedSelections)."""
    selections = selections or {}
    for key in REF_FIELDS:
        out.extend(_listed(selections.get(key)))
    crop = selections.get("coverCrop")
    if isinstance(crop, dict) and crop.get("assetId"):
        out.append({"assetId": crop["assetId"]})
    out.extend(markdown_image_refs(selections.get("body")))


def task_references(task: Any) -> list:
    """Every image reference of a task (docs/api.md §8), in order, each once: {"assetId"} dicts and URL strings."""
    refs: list = []
    candidates = task.candidates or {}
    refs.extend(candidates.get("coverImages") or [])
    for placeholder in candidates.get("bodyImageCandidates") or []:
        refs.extend(placeholder.get("options") or [])
    for group in candidates.get("imageGroups") or []:
        refs.extend(group.get("images") or [])
    for option in candidates.get("bodyOptions") or []:
        refs.extend(markdown_image_refs(option.get("content")))
    _refs_of_selections(task.selections, refs)
    _refs_of_selections(task.locked_selections, refs)
    for key, entry in (task.manual_overrides or {}).items():
        if not isinstance(entry, dict):
            continue
        if key == "body":
            refs.extend(markdown_image_refs(entry.get("value")))
        elif key in REF_FIELDS:
            refs.extend(_listed(entry.get("value")) + _listed(entry.get("basedOn")))
    draft = task.body_draft or {}
    refs.extend(markdown_image_refs(draft.get("markdown")))
    refs.extend(markdown_image_refs(draft.get("sourceBodyCandidate")))
    unique, seen = [], set()
    for ref in refs:
        key = ref_key(ref)
        if key is not None and key not in seen:
            seen.add(key)
            unique.append(ref)
    return unique
