"""The per-task publish claim: at most one publish of a task runs at a time (docs/api.md §5).

A row, not a thread lock, so it holds across processes while the platform calls run with no transaction open.
`heartbeat_at` is renewed before every platform call; a stale row (a crashed process) may be taken over, and
`owner` (host:pid) lets a restarted service end its predecessor's claims at once.
"""

import peewee

from models.base import BaseModel, JSONField
from models.review import ReviewTask


class PublishLock(BaseModel):
    id = peewee.AutoField()
    task = peewee.ForeignKeyField(ReviewTask, unique=True, on_delete="CASCADE")
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    job_id = peewee.CharField(max_length=64)  # the job that holds the claim
    created_at = peewee.CharField(max_length=32)
    heartbeat_at = peewee.CharField(max_length=32)
    owner = peewee.CharField(max_length=300, null=True)  # host:pid; added by schema version 6
    # {"step": "uploading_images", "done", "total"} or {"step": "saving_draft"}; schema version 8
    progress = JSONField(null=True)
