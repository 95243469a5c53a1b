"""Versions and If-Match (docs/api.md §4): every write bumps `version`; a stale If-Match is 412. Writers call
load_for_update(task_id, if_match), change the task, then save_task(task), inside one `immediate()`.
"""

import re

from models.review import ReviewTask, task_by_id
from rules.ids import now_iso
from services.errors import NotFound, PreconditionFailed, ServiceError, ValidationFailed

_ONE = r'(?:W/)?"?(\d{1,18})"?'  # one version as an ETag: "3", 3 or W/"3"
_TAG = re.compile(rf"^\s*{_ONE}\s*$")
# The whole header, as the OpenAPI document states it: absent or blank, `*`, or versions separated by commas.
IF_MATCH_PATTERN = rf"^\s*(?:\*|{_ONE}(?:\s*,\s*{_ONE})*)?\s*$"


def parse_if_match(value: str | None) -> list[int] | None:
    """Header value -> list of versions, or None for absent / `*` (matches any)."""
    if value is None or not value.strip() or value.strip() == "*":
        return None
    versions = []
    for part in value.split(","):
        match = _TAG.match(part)
        if not match:
            raise ValidationFailed(
                'If-Match must be the ETag of the task, e.g. "3"',
                {"If-Match": [f"not a task version: {part.strip()!r}"]},
            )
        versions.append(int(match.group(1)))
    return versions


def check_version(task: ReviewTask, if_match: str | None) -> None:
    """412 precondition_failed unless `if_match` (raw header value or None) names the task's version."""
    versions = parse_if_match(if_match)
    if versions is not None and task.version not in versions:
        raise PreconditionFailed(
            f"the task changed since you read it (now version {task.version}); read it again and retry",
            {"currentVersion": [str(task.version)]},
            headers={"ETag": f'"{task.version}"'},
        )


def get_task_row(task_id: str) -> ReviewTask:
    task = task_by_id(task_id)
    if task is None:
        raise task_not_found(task_id)
    return task


def task_not_found(task_id: str) -> ServiceError:
    return NotFound(f"no review task with id {task_id}")


def load_for_update(task_id: str, if_match: str | None = None) -> ReviewTask:
    """The task (404 when unknown) after the If-Match check (412); call inside immediate()."""
    task = get_task_row(task_id)
    check_version(task, if_match)
    return task


def save_task(task: ReviewTask) -> ReviewTask:
    """Write the task with version + 1 and a fresh updatedAt."""
    task.version += 1
    task.updated_at = now_iso()
    task.save()
    return task
