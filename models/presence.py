"""Who has a task page open (docs/api.md §15 Presence): one row per (task, admin), refreshed by the
page's heartbeat; rows older than REVIEW_PRESENCE_SECONDS mean nothing and are pruned on write."""

import peewee

from models.base import BaseModel


class TaskPresence(BaseModel):
    id = peewee.AutoField()
    task_id = peewee.CharField(max_length=64)  # the task's public id; rows go with the task (task_delete)
    username = peewee.CharField(max_length=64)
    since = peewee.CharField(max_length=32)  # first heartbeat of this continuous stay on the page
    seen_at = peewee.CharField(max_length=32, index=True)  # last heartbeat
    editing = peewee.BooleanField(default=False)

    class Meta:
        indexes = ((("task_id", "username"), True),)
