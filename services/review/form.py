"""What the review page's selection form shows first, and the body preview (no Flask here)."""

from typing import Any

from rules.vocabulary import REQUIRED_SELECTION_KEYS
from services.asset_refs import resolve_many
from services.assets import asset_view
from services.rendering import render_preview, theme_config


def _task_assets(task):
    """{key: asset dict} for every image the task names, keyed by assetId and by URL."""
    candidates = task["candidates"]
    refs: list = [*(candidates.get("coverImages") or [])]
    for placeholder in candidates.get("bodyImageCandidates") or []:
        refs += placeholder["options"]
    for group in candidates.get("imageGroups") or []:
        refs += group["images"]
    for source in (task.get("selections") or {}, task.get("lockedSelections") or {}):
        refs += [source[k] for k in ("coverImage",) if k in source]
        refs += source.get("bodyImages") or []
        refs += source.get("images") or []
        if source.get("coverCrop"):
            refs.append({"assetId": source["coverCrop"]["assetId"]})
    out = {}
    for asset in resolve_many(refs).values():
        if asset is not None:
            out[asset.asset_id] = out[asset.url] = asset_view(asset)
    return out


def _identity(assets, ref):
    asset = assets.get(ref["assetId"] if isinstance(ref, dict) else ref) if ref is not None else None
    return asset["assetId"] if asset else ref


def _index_of(assets, ref, options):
    """Position of the image `ref` among candidate `options` (URL and {"assetId"} compare equal)."""
    wanted = _identity(assets, ref)
    return next((i for i, option in enumerate(options) if _identity(assets, option) == wanted), None)


def _text_field(key, options, selections, overrides, optional):
    """Initial state of a text field: the final value and which candidate it started from.

    An `optional` field (author) missing from saved selections was left empty on purpose."""
    default = "" if optional and selections else (options[0] if options else "")
    value = selections.get(key, default)
    based_on = (overrides.get(key) or {}).get("basedOn", value)
    chosen = options.index(based_on) if based_on in options else None
    return {"key": key, "options": options, "value": value, "chosen": chosen}


def _initial_state(task, comments=True):
    """What the selection form shows first: saved selections, else the first candidate of each field."""
    candidates, selections = task["candidates"], task.get("selections") or {}
    overrides = task.get("manualOverrides") or {}
    state: dict = {}
    text_keys = (
        (("title", "titles"), ("summary", "summaries"), ("author", "authors"))
        if task["contentType"] == "article"
        else (("title", "titles"), ("description", "descriptions"))
    )
    required = REQUIRED_SELECTION_KEYS[task["contentType"]]
    state["text"] = [
        _text_field(key, candidates.get(name) or [], selections, overrides, key not in required)
        for key, name in text_keys
    ]
    options = candidates.get("bodyOptions") or []
    draft = task.get("bodyDraft") or {}
    source = next(
        (o for o in options if o["id"] == draft.get("sourceBodyCandidateId")), options[0] if options else None
    )
    state["body"] = {
        "source": source["id"] if source else None,
        "markdown": draft.get("markdown", selections.get("body", source["content"] if source else "")),
        "theme": draft.get("themeTemplate") or "default",
    }
    covers = candidates.get("coverImages") or []
    state["cover"] = selections.get("coverImage", covers[0] if covers else None)
    state["bodyImages"] = [
        (selections.get("bodyImages") or [])[i]
        if i < len(selections.get("bodyImages") or [])
        else (p["options"] or [None])[0]
        for i, p in enumerate(candidates.get("bodyImageCandidates") or [])
    ]
    groups = candidates.get("imageGroups") or []
    images = selections.get("images")
    group = next((g for g in groups if g["images"] == images), None if images else (groups[0] if groups else None))
    state["group"] = group["id"] if group else None
    state["images"] = images if images is not None else (group["images"] if group else [])
    state["coverCrop"] = selections.get("coverCrop")
    # The review page defaults to comments on (off for an account without the comment privilege,
    # docs/api.md §5) and not fans-only, whatever the candidates say.
    state["comments"] = selections.get("commentSettings") or {"needOpenComment": comments, "onlyFansCanComment": False}
    return state


def form_state(task: dict[str, Any], comments: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """(state, assets): the form's first values and the task's images ({assetId or url: asset dict});
    `comments`: the account has the comment privilege (WECHAT_<CODE>_COMMENTS)."""
    state, assets = _initial_state(task, comments), _task_assets(task)
    state["cover_index"] = _index_of(assets, state["cover"], task["candidates"].get("coverImages") or [])
    state["body_image_index"] = [
        _index_of(assets, chosen, placeholder["options"])
        for chosen, placeholder in zip(
            state["bodyImages"], task["candidates"].get("bodyImageCandidates") or [], strict=False
        )
    ]
    return state, assets


# What a previewed body shows instead of an image that is no asset. The page must not load it: a body
# from the agent could point at /api/auth/logout (signing the reviewer out) or at an outside tracker,
# and such an image cannot be published anyway (approval takes asset URLs only).
NOT_AN_ASSET = "/static/not-an-asset.svg"


def preview_body(
    markdown: str | None, theme: str | None, account_overrides: dict[str, Any] | None = None
) -> tuple[str, str | None]:
    """(html, None), or ("", message) when the theme or its overrides cannot be applied."""

    def placeholders(urls):
        found = resolve_many(urls)
        return {url: NOT_AN_ASSET for index, url in enumerate(urls) if found[index] is None}

    try:  # parsed once, the HTML remembered by content (docs/api.md §14)
        return render_preview(markdown or "", theme, theme_config(theme, account_overrides), placeholders), None
    except ValueError as err:
        return "", str(err)
