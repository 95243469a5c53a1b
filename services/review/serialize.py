"""ReviewTask rows -> the camelCase JSON of docs/api.md §4; optional parts are absent until they exist."""

from collections.abc import Iterable
from typing import Any

from models import db
from models.live import TaskLive
from models.review import ReviewTask, children_of, task_with_children
from schemas.dump import dumper
from schemas.review import TaskSchema

_dump_task = dumper(TaskSchema)


def _task_dict(task, events, jobs, live=None):
    """The task as TaskSchema says (`live` null until going live is asked for)."""
    return _dump_task(task, publishJobs=jobs, timeline=events, live=live)


def _lives(tasks: list[ReviewTask]) -> dict[int, TaskLive]:
    return {row.task_id: row for row in TaskLive.select().where(TaskLive.task.in_([task.id for task in tasks]))}


def tasks_to_dicts(tasks: Iterable[ReviewTask]) -> list[dict[str, Any]]:
    """Many tasks with their jobs, events and going live in four queries (no per-task lookups)."""
    tasks = list(tasks)
    if not tasks:
        return []
    events, jobs = children_of(tasks)
    lives = _lives(tasks)
    return [_task_dict(task, events[task.id], jobs[task.id], lives.get(task.id)) for task in tasks]


def task_to_dict(task: ReviewTask, events: list | None = None, jobs: list | None = None) -> dict[str, Any]:
    """One task with its publish jobs (by queuedAt) and timeline (in order of writing); both are
    read from the database unless the caller, having just written them all, passes them."""
    if events is not None and jobs is not None:
        return _task_dict(task, events, jobs, _lives([task]).get(task.id))
    return tasks_to_dicts([task])[0]


def task_detail(task_id: str) -> dict[str, Any] | None:
    """One task as JSON, or None, its parts read so that they agree (the task page: the hottest read)."""
    with db.atomic():
        found = task_with_children(task_id)
        return None if found is None else _task_dict(*found, _lives([found[0]]).get(found[0].id))
