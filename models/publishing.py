"""The per-task publish claim: at most one publish of a task runs at a time (docs/api.md §5).

A row exists while a publish of the task is between its two transactions (the platform calls run
with no transaction open). It is a row, not a thread lock, so it holds across threads and server
processes; `heartbeat_at` is renewed before every platform call, and a row whose heartbeat is
older than the stale limit (a crashed process) may be taken over. `owner` names the process
(host:pid), so that a restarted service ends its predecessor's claims at once instead.
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
