"""Agent PATCH of elements (PATCH .../elements; docs/api.md §4 "States and what they allow"; the PATCH rulings
in docs/review-states.md). Images a PATCH brings in come from the material library; those the task holds
already (its candidates, its selections) may stay.
"""

from typing import Any

from models import immediate
from rules.vocabulary import SELECTION_KEYS
from services.asset_refs import markdown_image_refs, resolve_many, task_references
from services.errors import Conflict
from services.review.changes import record
from services.review.concurrency import get_task_row, load_for_update, save_task
from services.review.drafts import patch_body_draft
from services.review.serialize import task_to_dict
from services.review.state_machine import PATCH_TRIGGERS, find_rule, fire, require_any
from services.review.validation import (
    Assets,
    Problems,
    check_approval_ready,
    check_foreign,
    check_not_blank,
    check_values,
    crop_fits_images,
)
from services.settings import Settings
from services.team.outbox import task_awaiting_review


def _locked_keys(task, keys):
    if not find_rule(task.status, "rework_patch") or not task.rejected_elements:
        return
    locked = [key for key in keys if key not in task.rejected_elements]
    if locked:
        open_keys = ", ".join(task.rejected_elements)
        raise Conflict(
            f"only the rejected fields may change now ({open_keys}); {', '.join(locked)} "
            f"{'is' if len(locked) == 1 else 'are'} locked",
            {key: [f"locked: not in rejectedElements ({open_keys})"] for key in locked},
            code="field_locked",
        )


def _trigger(task, keys):
    """Which row of the state table this PATCH takes, and the rejected keys that remain."""
    if find_rule(task.status, "agent_patch"):
        return "agent_patch", None
    if not task.rejected_elements:
        return "rework_whole_task", []
    remaining = [key for key in task.rejected_elements if key not in keys]
    return ("rework_patch" if remaining else "rework_complete"), remaining


def _check_kept_crop(values, merged, remaining, problems):
    """New images must keep the first image a stored coverCrop names (a patched crop is checked with
    its value; a crop still waiting for rework is checked when the rework completes)."""
    crop = merged.get("coverCrop")
    if "images" not in values or "coverCrop" in values or not crop or "coverCrop" in (remaining or ()):
        return
    if not crop_fits_images(crop, merged["images"]):
        problems.add(
            "images",
            f"coverCrop crops {crop['assetId']!r}, which must stay the first image; keep it "
            "first or patch coverCrop in the same request",
        )


# Summaries of the approval-level problems a rework PATCH must not leave.
_REWORK_SUMMARY = {
    "rework_complete": "this fixes the last rejected field, but the task is not complete for approval",
    "rework_patch": "a rejected field must be ready for approval when it is patched",
}


def _rework_problems(assets, task, merged, draft, keys, trigger, cover_ratio):
    """All of them when the PATCH fixes the last rejected key, else those of the keys it fixes (a
    fixed key leaves rejectedElements for good)."""
    ready = check_approval_ready(assets, task, merged, draft, prefix="selections", cover_ratio=cover_ratio)
    if trigger == "rework_complete":
        return ready
    return Problems({path: messages for path, messages in ready.items() if path.split(".")[1] in keys})


def _patched_images(values):
    """(error path, reference) of every image the patched values name."""
    for key, value in values.items():
        if key == "coverImage":
            yield key, value
        elif key == "coverCrop":  # else a crop could bring an upload in, and images follow it as "held"
            yield "coverCrop.assetId", {"assetId": value["assetId"]}
        elif key in ("bodyImages", "images"):
            yield from (
                (f"{key}.{index}" + (".assetId" if key == "images" else ""), ref) for index, ref in enumerate(value)
            )
        elif key == "body":
            yield from ((key, url) for url in markdown_image_refs(value))


def _check_library_origin(assets, task, values, problems):
    held = None
    for path, ref in _patched_images(values):
        asset = assets.get(ref)
        if asset is None or asset.scope == "library":
            continue
        if held is None:
            held = {a.asset_id for a in resolve_many(task_references(task)).values() if a is not None}
        if asset.asset_id not in held:
            problems.add(
                path,
                f"{asset.asset_id!r} is a task-local upload; images a PATCH brings in come from "
                "the material library (GET /api/assets?scope=library)",
            )


# Times the rework diff is computed again outside the write lock when another write changed its base
# meanwhile; after that it is computed inside (bounded all the same, docs/api.md §15).
DIFF_TRIES = 3


def _rework_base(task_id: str, keys: list[str]) -> dict[str, Any] | None:
    """The values the rework diff starts from ({key: value at the rejection}), read without the write
    lock; None when the task is not in rework (a plain draft save records no diff)."""
    task = get_task_row(task_id)
    if find_rule(task.status, "agent_patch") or not find_rule(task.status, "rework_patch"):
        return None
    return {key: (task.selections or {}).get(key) for key in keys}


def patch_elements(
    task_id: str, patch: dict[str, Any], settings: Settings, *, if_match: str | None = None
) -> dict[str, Any]:
    """Apply an agent PATCH; returns the task as JSON, read inside the write. The rework diff is computed
    before the write lock and checked inside it (docs/api.md §15 "The rework diff is bounded")."""
    keys = [key for key in patch if key != "sourceBodyCandidateId"]
    values = {key: patch[key] for key in keys}
    if isinstance(values.get("body"), str):
        markdown_image_refs(values["body"])  # parsed here, not under the lock (remembered by content, §14)
    for attempt in range(DIFF_TRIES + 1):
        last = attempt == DIFF_TRIES
        base = None if last else _rework_base(task_id, keys)
        diff = None if base is None else (base, record(base, values))
        result = _apply(task_id, patch, keys, settings, if_match, diff, last)
        if result is not None:
            return result
    raise AssertionError("unreachable: the last try computes the diff inside the write")


def _apply(
    task_id: str,
    patch: dict[str, Any],
    keys: list[str],
    settings: Settings,
    if_match: str | None,
    diff: tuple[dict, dict] | None,
    last: bool,
) -> dict[str, Any] | None:
    """The PATCH in one write; None (nothing written) when `diff` ((base, record) computed before the
    lock) does not start from the values the task holds now and this is not the `last` try."""
    cover_ratio = settings.cover_ratio
    with immediate():
        task = load_for_update(task_id, if_match)
        require_any(task.status, PATCH_TRIGGERS, "changing elements")
        problems, assets = Problems(), Assets()
        check_foreign({k: None for k in keys}, SELECTION_KEYS[task.content_type], task.content_type, "", problems)
        problems.raise_if_any("the patch names fields this task does not have")
        _locked_keys(task, keys)
        values = {key: patch[key] for key in keys}
        merged = {**(task.selections or {}), **values}
        check_values(assets, values, "", problems, cover_ratio=cover_ratio, context=merged)
        check_not_blank(values, task.content_type, "", problems)
        _check_library_origin(assets, task, values, problems)
        trigger, remaining = _trigger(task, keys)
        _check_kept_crop(values, merged, remaining, problems)
        draft = task.body_draft
        if "body" in values:
            draft = patch_body_draft(assets, task, values["body"], patch.get("sourceBodyCandidateId"), problems)
        problems.raise_if_any("the patch is not valid")
        if trigger in _REWORK_SUMMARY:
            _rework_problems(assets, task, merged, draft, keys, trigger, cover_ratio).raise_if_any(
                _REWORK_SUMMARY[trigger]
            )
        # docs/api.md §15: a rework PATCH records each element's value at the rejection and its new one.
        changed: dict[str, Any] = {}
        if trigger != "agent_patch":
            now = {key: (task.selections or {}).get(key) for key in keys}
            if diff is not None and diff[0] == now:
                changed = diff[1]
            elif last:
                changed = record(task.selections, values)
            else:
                return None
        task.selections = merged
        task.body_draft = draft
        overrides = {k: v for k, v in (task.manual_overrides or {}).items() if k not in keys}
        task.manual_overrides = overrides or None
        if trigger == "rework_patch":
            task.rejected_elements = remaining
        elif trigger in ("rework_complete", "rework_whole_task"):
            task.rejected_elements = task.locked_selections = None
        data = {
            "draft_saved": {"fields": keys},
            "rework_submitted": {"fields": keys, "remainingElements": remaining or [], **changed},
            "returned_to_review": {},
        }
        if "returned_to_review" in fire(task, trigger, "agent", None, data).events:
            task_awaiting_review(settings.team, task, "reworked")  # docs/api.md §15: back from rework
        save_task(task)
        return task_to_dict(task)
