"""Admin decisions on a pending_review task (POST .../decision; docs/api.md §4's decision rules), validated in
stages (the rulings in docs/review-states.md) inside one IMMEDIATE transaction with the If-Match check.
"""

from typing import Any

from models import immediate
from models.review import ReviewTask
from rules.ids import now_iso
from rules.vocabulary import APPROVE_ACTIONS, ELEMENT_KEYS, SELECTION_KEYS
from services.review.concurrency import load_for_update, save_task
from services.review.drafts import body_options, check_overrides, complete_overrides, decision_body_draft
from services.review.serialize import task_to_dict
from services.review.state_machine import fire, rule_for
from services.review.validation import (
    DEFAULT_COVER_RATIO,
    Assets,
    Problems,
    check_complete,
    check_foreign,
    check_values,
    join,
    same_value,
)
from services.review.webhooks import enqueue_approval, enqueue_rejection
from services.settings import Settings

REJECTION_ONLY = ("rejectedElements", "lockedSelections", "rejectionReason", "rejectionNote")


def _rejected_elements(payload, content_type, problems):
    rejected = []
    for index, key in enumerate(payload.get("rejectedElements") or []):
        if key not in ELEMENT_KEYS[content_type]:
            problems.add(
                f"rejectedElements.{index}",
                f"not an element of {content_type} tasks; use one of: {', '.join(ELEMENT_KEYS[content_type])}",
            )
        elif key not in rejected:
            rejected.append(key)
    return rejected


def _check_selections(assets, task, payload, rejected, whole_task, cover_ratio):
    """Stage 1: the selections object (required and complete unless the whole task is rejected)."""
    problems, selections, ctype = Problems(), payload.get("selections"), task.content_type
    approve = payload["action"] in APPROVE_ACTIONS
    if selections is None:
        if not whole_task:
            problems.add(
                "selections",
                f"required for {payload['action']}" + ("" if approve else " with a non-empty rejectedElements"),
            )
        return problems
    check_foreign(selections, SELECTION_KEYS[ctype], ctype, "selections", problems)
    if not whole_task:
        # The body of an article created with titles only does not exist yet: rejecting it asks the agent
        # to write one, so it need not be selected. Any other rejected key holds the value to fix.
        unwritten = ("body",) if "body" in rejected and not body_options(task) else ()
        check_complete(selections, ctype, "selections", problems, unwritten)
    # Rejected keys may hold the faulty value the agent is asked to fix, but no dangling reference;
    # the rest must be final.
    keys = [k for k in selections if k not in rejected]
    check_values(
        assets, selections, "selections", problems, keys=keys, approval=not whole_task, cover_ratio=cover_ratio
    )
    check_values(assets, selections, "selections", problems, keys=rejected, refs_only=True)
    return problems


def _check_rejection(assets, task, payload, rejected, problems):
    """Stage 2 of reject_rework: reason, lockedSelections (rules 4-5)."""
    selections, locked = payload.get("selections") or {}, payload.get("lockedSelections")
    if not payload.get("rejectionReason"):
        problems.add("rejectionReason", "required for reject_rework")
    if not rejected:
        if locked:
            problems.add("lockedSelections", "only with a non-empty rejectedElements (field-level rejection)")
        return
    if locked is None:
        problems.add("lockedSelections", "required when rejectedElements is not empty")
        return
    check_foreign(locked, SELECTION_KEYS[task.content_type], task.content_type, "lockedSelections", problems)
    for key in locked:
        if key in rejected:
            problems.add(join("lockedSelections", key), "is also in rejectedElements; a key is rejected or locked")
        elif key in selections and not same_value(assets, key, locked[key], selections[key]):
            problems.add(join("lockedSelections", key), f"must equal selections.{key}")
        elif key not in selections:
            problems.add(join("lockedSelections", key), f"selections.{key} is not selected")
    for key in selections:
        if key not in rejected and key not in locked:
            problems.add(join("lockedSelections", key), "missing: lock every selected field that is not rejected")


def validate_decision(
    task: ReviewTask, payload: dict[str, Any], cover_ratio: tuple[float, float] = DEFAULT_COVER_RATIO
) -> tuple:
    """All decision rules; returns (selections, bodyDraft, rejected, manualOverrides) to store, or raises 400."""
    assets, action = Assets(), payload["action"]
    stage0 = Problems()
    rejected = _rejected_elements(payload, task.content_type, stage0) if action == "reject_rework" else []
    whole_task = action == "reject_rework" and not payload.get("rejectedElements")
    problems = _check_selections(assets, task, payload, rejected, whole_task, cover_ratio)
    problems.raise_if_any("the selections are not complete or not valid")
    problems = stage0
    if action in APPROVE_ACTIONS:
        for key in REJECTION_ONLY:
            if payload.get(key):
                problems.add(key, "only for reject_rework")
    else:
        _check_rejection(assets, task, payload, rejected, problems)
    selections = payload.get("selections")
    # A body that stays (approval, or locked in a field-level rejection) needs its draft now:
    # a locked body could never be given one later.
    needs_draft = action in APPROVE_ACTIONS or (not whole_task and "body" not in rejected)
    draft = decision_body_draft(assets, task, selections, payload.get("bodyDraft"), problems, required=needs_draft)
    check_overrides(assets, task, payload.get("manualOverrides"), selections, draft, problems)
    problems.raise_if_any(f"the {action} decision is not valid")
    overrides = payload.get("manualOverrides")
    if not whole_task:
        overrides = complete_overrides(assets, task, selections, draft, overrides, skip=rejected)
    return selections, draft, rejected, overrides


def decide(task_id: str, payload: dict[str, Any], settings: Settings, **options: Any) -> dict[str, Any]:
    """Apply an admin decision; returns the task as JSON, read inside the write (its timeline holds no
    later request's events). `options`: those of apply_decision."""
    with immediate():
        return task_to_dict(apply_decision(task_id, payload, settings, **options))


def apply_decision(
    task_id: str, payload: dict[str, Any], settings: Settings, *, actor_name: str | None, if_match: str | None = None
) -> ReviewTask:
    """The decision's write; returns the saved row. approve_and_publish approves like approve_without_publish
    (services.publishing claims its job in the same transaction)."""
    action = payload["action"]
    with immediate():
        task = load_for_update(task_id, if_match)
        rule_for(task.status, action)  # 409 invalid_state before any payload rule
        selections, draft, rejected, overrides = validate_decision(task, payload, settings.cover_ratio)
        if selections is not None:
            task.selections = selections
        if overrides is not None or action in APPROVE_ACTIONS or rejected:
            task.manual_overrides = overrides or None
        task.body_draft = draft
        if action in APPROVE_ACTIONS:
            task.rejected_elements = task.locked_selections = None
            task.rejection_reason = task.rejection_note = None
            data = {"approved": {"action": action}}
        else:
            task.rejected_elements = rejected
            task.locked_selections = payload.get("lockedSelections") if rejected else None
            task.rejection_reason = payload["rejectionReason"]
            task.rejection_note = payload.get("rejectionNote") or None
            data = {
                "rejected": {
                    "rejectedElements": rejected,
                    "rejectionReason": task.rejection_reason,
                    "rejectionNote": task.rejection_note,
                }
            }
        task.decided_at = now_iso()  # the dataset export's order (docs/api.md §20)
        fire(task, action, "admin", actor_name, data)
        save_task(task)
        if action == "reject_rework":
            enqueue_rejection(task)
        else:
            enqueue_approval(task, action)
        return task
