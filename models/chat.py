"""Decision cards in the team's chat (docs/api.md §22): one row per card a task has on a platform.

`state` moves to_send -> sent, and a sent card is redrawn when its task moves on: `version` is the task's
version the card shows (and its buttons carry), so a card whose task changed since is found by a plain
comparison. A card drawn for a task no longer waiting for review is `closed`.
"""

import peewee

from models.base import BaseModel, JSONField
from models.review import ReviewTask


class ChatCard(BaseModel):
    id = peewee.AutoField()
    task = peewee.ForeignKeyField(ReviewTask, on_delete="CASCADE", index=True)
    task_id: int
    platform = peewee.CharField(max_length=16)  # feishu | wecom
    state = peewee.CharField(max_length=16, index=True)  # to_send | sent | closed | failed
    version = peewee.IntegerField()  # the task's version the card shows
    message_id = peewee.CharField(max_length=128, null=True)  # Feishu's open_message_id
    card_id = peewee.CharField(max_length=128, null=True, unique=True)  # WeCom's task_id: <taskId>-<version>
    response_code = peewee.CharField(max_length=255, null=True)  # WeCom: updates the card once
    shown = JSONField(null=True)  # what the card says now ({"decided": …}), to redraw only on a change
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = peewee.CharField(max_length=32, index=True)
    last_error = peewee.TextField(null=True)
    created_at = peewee.CharField(max_length=32)
    updated_at = peewee.CharField(max_length=32)
