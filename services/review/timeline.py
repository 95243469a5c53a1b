"""Timeline events of a task (docs/api.md §4 Timeline): {"id","type","at","actor","actorName","data"}."""

from typing import Any

from models.review import ReviewTask, TimelineEvent
from rules.ids import new_id, now_iso
from rules.vocabulary import ACTORS, EVENT_TYPES


def add_event(
    task: ReviewTask, type: str, actor: str, actor_name: str | None = None, data: dict[str, Any] | None = None
) -> TimelineEvent:
    """Append one event to `task` (a saved ReviewTask); call inside the write's transaction."""
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown timeline event type {type!r}")
    if actor not in ACTORS:
        raise ValueError(f"unknown actor {actor!r}")
    return TimelineEvent.create(
        event_id=new_id(), task=task, type=type, at=now_iso(), actor=actor, actor_name=actor_name, data=data or {}
    )
