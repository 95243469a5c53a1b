"""What readers did (docs/api.md §19): a live article's figures per day, and the daily fetches. A `StatsFetch`
row is the claim that makes one account's fetch of one day run once across processes.
"""

import peewee

from models.base import BaseModel
from models.review import ReviewTask

FIGURES = ("read_user", "share_user", "like_user", "zaikan_user", "collection_user", "comment_count")
MAX_FIGURE = 10**12  # a figure above this is not a reader count (docs/api.md §19); sums stay far inside 64 bits


class TaskDayStats(BaseModel):
    id = peewee.AutoField()
    task = peewee.ForeignKeyField(ReviewTask, on_delete="CASCADE")
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    day = peewee.CharField(max_length=10)  # YYYY-MM-DD
    read_user = peewee.BigIntegerField(null=True)
    share_user = peewee.BigIntegerField(null=True)
    like_user = peewee.BigIntegerField(null=True)
    zaikan_user = peewee.BigIntegerField(null=True)
    collection_user = peewee.BigIntegerField(null=True)
    comment_count = peewee.BigIntegerField(null=True)
    fetched_at = peewee.CharField(max_length=32)

    class Meta:
        indexes = ((("task", "day"), True),)


class StatsFetch(BaseModel):
    id = peewee.AutoField()
    account = peewee.CharField(max_length=64)
    day = peewee.CharField(max_length=10)
    status = peewee.CharField(max_length=16)  # running | done | delayed (is_delay: asked again) | failed
    attempts = peewee.IntegerField(default=0)
    last_error = peewee.TextField(null=True)  # the API's English
    last_errcode = peewee.IntegerField(null=True)  # the platform's, for the pages' words (rules/labels.py)
    next_attempt_at = peewee.CharField(max_length=32, null=True)  # a failed one is retried then
    owner = peewee.CharField(max_length=300, null=True)
    updated_at = peewee.CharField(max_length=32)

    class Meta:
        indexes = ((("account", "day"), True),)
