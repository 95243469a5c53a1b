"""Which waiting tasks a card can decide in one tap (docs/api.md §22): nothing is left to choose."""

from typing import Any

from marshmallow import ValidationError

from models.review import ReviewTask
from schemas.review import DecisionSchema
from services.errors import ServiceError
from services.review.decisions import validate_decision
from services.settings import Settings

# Article fields and the candidate list each is chosen from: one option each leaves nothing to choose.
_ONE_OF = {"title": "titles", "summary": "summaries", "coverImage": "coverImages"}


def _single_candidates(task: ReviewTask) -> dict[str, Any] | None:
    candidates = task.candidates or {}
    if task.content_type != "article":
        return None
    lists = {key: candidates.get(name) or [] for key, name in _ONE_OF.items()}
    bodies, authors = candidates.get("bodyOptions") or [], candidates.get("authors") or []
    placeholders = candidates.get("bodyImageCandidates") or []  # each with one option: nothing to choose
    if (
        any(len(values) != 1 for values in lists.values())
        or len(bodies) != 1
        or len(authors) > 1
        or any(len(placeholder.get("options") or []) != 1 for placeholder in placeholders)
    ):
        return None
    chosen = {key: values[0] for key, values in lists.items()}
    chosen["body"] = bodies[0]["content"]
    if placeholders:
        chosen["bodyImages"] = [placeholder["options"][0] for placeholder in placeholders]
    if authors:
        chosen["author"] = authors[0]
    return chosen


def approval(task: ReviewTask, action: str, settings: Settings) -> dict[str, Any] | None:
    """The decision payload that approves `task` as it stands (`action`: approve_and_publish or
    approve_without_publish), or None when something is left to choose or it would not pass the page's rules
    (a candidate longer than its selection takes, say: the card then only opens the page, docs/api.md §22).
    A task back from rework holds its complete choices (locked and patched) in its selections."""
    if task.status != "pending_review":
        return None
    chosen = _single_candidates(task) or {}
    selections = {**chosen, **(task.selections or {})}
    if not selections:
        return None
    try:
        payload = DecisionSchema().load({"action": action, "selections": selections})
        validate_decision(task, payload, settings.cover_ratio)
    except (ValidationError, ServiceError):
        return None
    return payload


def rejection(note: str | None) -> dict[str, Any]:
    """Send the whole task back, reason `other`, with the note typed in the card."""
    return DecisionSchema().load(
        {
            "action": "reject_rework",
            "rejectionReason": "other",
            "rejectionNote": (note or "").strip()[:2000] or "sent back from chat",
        }
    )
