"""Review tasks, their timeline, publish jobs, and the idempotency keys of task creation. `version` goes up by
one on every write and is the task's ETag (docs/api.md §4).
"""

import peewee

from models.base import BaseModel, JSONField, db, first_row


class ReviewTask(BaseModel):
    id = peewee.AutoField()
    task_id = peewee.CharField(max_length=64, unique=True)
    public_account = peewee.CharField(max_length=32, index=True)
    content_type = peewee.CharField(max_length=16)
    topic = peewee.TextField()
    external_content_id = peewee.CharField(max_length=128, null=True, index=True)
    status = peewee.CharField(max_length=32)  # indexed with updated_at (Meta.indexes)
    candidates = JSONField()
    selections = JSONField(null=True)
    manual_overrides = JSONField(null=True)
    body_draft = JSONField(null=True)
    rejected_elements = JSONField(null=True)  # [] = whole-task rejection; None outside rework
    locked_selections = JSONField(null=True)
    rejection_reason = peewee.CharField(max_length=32, null=True)
    rejection_note = peewee.TextField(null=True)
    context = JSONField(null=True)  # {"prompt", "model"} the agent sent at creation (docs/api.md §20); None: none
    # The moment of the last decision (approve or reject_rework): the dataset export's order (docs/api.md §20).
    decided_at = peewee.CharField(max_length=32, null=True, index=True)
    version = peewee.IntegerField(default=1)
    created_at = peewee.CharField(max_length=32, index=True)
    updated_at = peewee.CharField(max_length=32, index=True)

    class Meta:
        # Every index is paid for on each write (a 4 KiB WAL page per index per commit), so only
        # the lists' filters and order have one (and decided_at, the dataset export's order, written only
        # by decisions): status alone is the prefix of this one.
        indexes = ((("status", "updated_at"), False),)


class TimelineEvent(BaseModel):
    id = peewee.AutoField()
    event_id = peewee.CharField(max_length=64, unique=True)
    task = peewee.ForeignKeyField(ReviewTask, backref="timeline_events", on_delete="CASCADE", index=True)
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    type = peewee.CharField(max_length=48)
    at = peewee.CharField(max_length=32)
    actor = peewee.CharField(max_length=16)  # agent | admin | system
    actor_name = peewee.CharField(max_length=64, null=True)
    data = JSONField(null=True)


class PublishJob(BaseModel):
    id = peewee.AutoField()
    job_id = peewee.CharField(max_length=64, unique=True)
    task = peewee.ForeignKeyField(ReviewTask, backref="publish_jobs", on_delete="CASCADE", index=True)
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    status = peewee.CharField(max_length=16)  # succeeded | failed
    trigger_mode = peewee.CharField(max_length=32)  # manual | auto_after_approval
    attempt_count = peewee.IntegerField(default=1)
    draft_media_id = peewee.CharField(max_length=128, null=True)
    queued_at = peewee.CharField(max_length=32)
    started_at = peewee.CharField(max_length=32, null=True)
    finished_at = peewee.CharField(max_length=32, null=True)
    last_error = peewee.TextField(null=True)
    snapshot = JSONField(null=True)
    retry_of = peewee.CharField(max_length=64, null=True)


class IdempotencyKey(BaseModel):
    """One replayable task creation: same key and body -> same answer (rules.limits.IDEMPOTENCY_HOURS)."""

    id = peewee.AutoField()
    key = peewee.CharField(max_length=128, unique=True)
    body_hash = peewee.CharField(max_length=64)
    status = peewee.IntegerField()
    response = JSONField()
    created_at = peewee.CharField(max_length=32, index=True)


# ---- the reads every task page and list make ------------------------------------------------------
# Written as SQL for peewee's Model.raw(): building a select of every column costs peewee more than SQLite
# takes to answer it, and these run several times on every page and API read. Values are bound parameters.


def _placeholders(count: int) -> str:
    return ", ".join([db.param] * count)


def task_by_id(task_id: str) -> ReviewTask | None:
    """The task with this public id, or None."""
    return first_row(ReviewTask.raw(f"SELECT * FROM review_task WHERE task_id = {db.param} LIMIT 1", task_id))  # noqa: S608


def children_of(tasks: list[ReviewTask]) -> tuple[dict, dict]:
    """({task pk: events in order of writing}, {task pk: jobs by queuedAt}) in two queries; each job's
    `task` is set to its task (no query for job.task)."""
    by_pk = {task.id: task for task in tasks}
    events: dict[int, list] = {pk: [] for pk in by_pk}
    jobs: dict[int, list] = {pk: [] for pk in by_pk}
    if not by_pk:
        return events, jobs
    pks, among = list(by_pk), _placeholders(len(by_pk))
    for event in TimelineEvent.raw(f"SELECT * FROM timeline_event WHERE task_id IN ({among}) ORDER BY id", *pks):  # noqa: S608
        events[event.task_id].append(event)
    for job in PublishJob.raw(f"SELECT * FROM publish_job WHERE task_id IN ({among}) ORDER BY queued_at, id", *pks):  # noqa: S608
        job.task = by_pk[job.task_id]
        jobs[job.task_id].append(job)
    return events, jobs


def task_with_children(task_id: str) -> tuple[ReviewTask, list, list] | None:
    """(task, events, jobs) read in one transaction so that they agree, or None."""
    with db.atomic():
        task = task_by_id(task_id)
        if task is None:
            return None
        events, jobs = children_of([task])
        return task, events[task.id], jobs[task.id]
