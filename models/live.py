"""Going live (docs/api.md §18; its states: docs/review-states.md "Going live"): a task's published draft on its
way to readers through freepublish. One row per task, reused after a failure or a cancellation and kept once live
(the statistics of docs/api.md §19 find the article through it).
"""

import peewee

from models.base import BaseModel
from models.review import ReviewTask


class TaskLive(BaseModel):
    id = peewee.AutoField()
    task = peewee.ForeignKeyField(ReviewTask, unique=True, on_delete="CASCADE")
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    account = peewee.CharField(max_length=64)
    draft_media_id = peewee.CharField(max_length=255)
    status = peewee.CharField(max_length=16, index=True)
    at = peewee.CharField(max_length=32, index=True)  # when it is (or was) to be submitted, ISO UTC
    publish_id = peewee.CharField(max_length=64, null=True, index=True)
    msg_data_id = peewee.CharField(max_length=64, null=True)
    article_id = peewee.CharField(max_length=255, null=True)
    article_url = peewee.TextField(null=True)
    fail_reason = peewee.TextField(null=True)  # the API's English sentence
    fail_code = peewee.CharField(max_length=32, null=True)  # rules/labels.py; None: the platform's words
    fail_detail = peewee.TextField(null=True)  # the call's own failure (no_answer) or the platform's words
    owner = peewee.CharField(max_length=300, null=True)  # the process submitting it (services.owners)
    submitted_at = peewee.CharField(max_length=32, null=True)
    next_poll_at = peewee.CharField(max_length=32, null=True, index=True)  # freepublish/get due; None: none
    polls = peewee.IntegerField(default=0)
    live_at = peewee.CharField(max_length=32, null=True)
    requested_by = peewee.CharField(max_length=64, null=True)
    via = peewee.CharField(max_length=16, default="freepublish")  # or "mass_send": an edition (docs/api.md §21)
    edition_id = peewee.CharField(max_length=40, null=True, index=True)
    created_at = peewee.CharField(max_length=32)
    updated_at = peewee.CharField(max_length=32)
