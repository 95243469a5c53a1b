"""Review tasks, their timeline, publish jobs, and the idempotency keys of task creation.

Filterable fields are indexed columns; nested parts (candidates, selections, overrides, drafts)
are JSON. `version` goes up by one on every write and is the task's ETag (CONTRACT §4).
"""
import peewee

from models.base import BaseModel, JSONField


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

