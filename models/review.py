"""Review tasks, their timeline, publish jobs, and the idempotency keys of task creation.

Filterable fields are indexed columns; nested parts (candidates, selections, overrides, drafts)
are JSON. `version` goes up by one on every write and is the task's ETag (CONTRACT §4).
"""
import json

import peewee

from models.base import BaseModel, JSONField, db, prepared_rows, prepared_select, quote_name, rows_as


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
    version = peewee.IntegerField(default=1)
    created_at = peewee.CharField(max_length=32, index=True)
    updated_at = peewee.CharField(max_length=32, index=True)

    class Meta:
        # Every index is paid for on each write (a 4 KiB WAL page per index per commit), so only
        # the lists' filters and order have one: status alone is the prefix of this one.
        indexes = ((("status", "updated_at"), False),)


class TimelineEvent(BaseModel):
    id = peewee.AutoField()
    event_id = peewee.CharField(max_length=64, unique=True)
    task = peewee.ForeignKeyField(ReviewTask, backref="timeline_events", on_delete="CASCADE", index=True)
    type = peewee.CharField(max_length=48)
    at = peewee.CharField(max_length=32)
    actor = peewee.CharField(max_length=16)  # agent | admin | system
    actor_name = peewee.CharField(max_length=64, null=True)
    data = JSONField(null=True)


class PublishJob(BaseModel):
    id = peewee.AutoField()
    job_id = peewee.CharField(max_length=64, unique=True)
    task = peewee.ForeignKeyField(ReviewTask, backref="publish_jobs", on_delete="CASCADE", index=True)
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



# ---- reads of the hot paths (measured in bench/run.py) --------------------------------------------
# Plain peewee works on every model; these few reads run through models.base's prepared statements
# because the task page and list are read far more than anything else.

def task_by_id(task_id: str) -> ReviewTask | None:
    """The task with this public id, or None."""
    found = prepared_select(ReviewTask, "task_by_id", lambda: ReviewTask.select().where(
        ReviewTask.task_id == "").limit(1), task_id, 1)
    return found[0] if found else None


def children_of(tasks: list[ReviewTask]) -> tuple[dict, dict]:
    """({task pk: events in order of writing}, {task pk: jobs by queuedAt}) in two queries; each job's
    `task` is set to its task (no query for job.task)."""
    by_pk = {task.id: task for task in tasks}
    events: dict[int, list] = {pk: [] for pk in by_pk}
    jobs: dict[int, list] = {pk: [] for pk in by_pk}
    pks, size = list(by_pk), len(by_pk)
    for event in prepared_select(TimelineEvent, ("events_of", size), lambda: TimelineEvent.select().where(
            TimelineEvent.task.in_([0] * size)).order_by(TimelineEvent.id), *pks):
        events[event.task_id].append(event)
    for job in prepared_select(PublishJob, ("jobs_of", size), lambda: PublishJob.select().where(
            PublishJob.task.in_([0] * size)).order_by(PublishJob.queued_at, PublishJob.id), *pks):
        job.task = by_pk[job.task_id]
        jobs[job.task_id].append(job)
    return events, jobs


def _children_json(model, order):
    """SQL: the rows of `model` belonging to task `t`, as one JSON array of arrays (SQLite json1)."""
    meta = model._meta
    columns = ", ".join(quote_name(field.column_name) for field in meta.sorted_fields)
    return (f"(SELECT json_group_array(json_array({columns})) FROM (SELECT * FROM {quote_name(meta.table_name)} "  # noqa: S608
            f"WHERE task_id = t.id ORDER BY {order}))")


def _detail_sql():
    return (f'SELECT t.*, {_children_json(TimelineEvent, "id")}, {_children_json(PublishJob, "queued_at, id")} '  # noqa: S608
            f"FROM {quote_name(ReviewTask._meta.table_name)} AS t WHERE t.task_id = ? LIMIT 1")


def task_with_children(task_id: str) -> tuple[ReviewTask, list, list] | None:
    """(task, events, jobs) read so that they agree, or None.

    On SQLite one statement (one snapshot, no transaction; a third of the SQLite calls of three
    queries); elsewhere three queries in one transaction.
    """
    if not isinstance(db.obj, peewee.SqliteDatabase):
        with db.atomic():
            task = task_by_id(task_id)
            if task is None:
                return None
            events, jobs = children_of([task])
            return task, events[task.id], jobs[task.id]
    rows, description = prepared_rows("task_detail", _detail_sql, task_id)
    if not rows:
        return None
    *task_values, events_json, jobs_json = rows[0]
    columns = ReviewTask._meta.columns
    task = rows_as(ReviewTask, [columns[column[0]] for column in description[:-2]], [task_values])[0]
    event_rows = rows_as(TimelineEvent, TimelineEvent._meta.sorted_fields, json.loads(events_json))
    job_rows = rows_as(PublishJob, PublishJob._meta.sorted_fields, json.loads(jobs_json))
    for job in job_rows:
        job.task = task
    # json_group_array keeps its input's order in practice, but SQL does not promise it.
    ordered = sorted(event_rows, key=lambda event: event.id)
    return task, ordered, sorted(job_rows, key=lambda job: (job.queued_at, job.id))
