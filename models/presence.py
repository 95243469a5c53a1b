"""Who has a task page open (docs/api.md §15 Presence): one row per open page (task, admin, page), refreshed
by the page's heartbeat; rows older than REVIEW_PRESENCE_SECONDS mean nothing and are pruned on write. A page
that left keeps its row, marked `left`, until then: a heartbeat it sent before leaving that arrives after the
leave does not bring its admin back."""

import peewee

from models.base import BaseModel


class TaskPresence(BaseModel):
    id = peewee.AutoField()
    task_id = peewee.CharField(max_length=64)  # the task's public id; rows go with the task (task_delete)
    username = peewee.CharField(max_length=64)
    page = peewee.CharField(max_length=64, default="")  # the page's own id ("" for a caller that sends none)
    since = peewee.CharField(max_length=32)  # first heartbeat of this continuous stay on the page
    seen_at = peewee.CharField(max_length=32, index=True)  # last heartbeat
    editing = peewee.BooleanField(default=False)
    left = peewee.BooleanField(default=False)

    class Meta:
        indexes = ((("task_id", "username", "page"), True),)
