"""Readers' comments (docs/api.md §23): what readers wrote under a live article, the agent's proposed replies,
and one `CommentFetch` row per article, the claim and lease that make one fetch of it run at a time across
processes. A reader's openid is kept to recognise the same comment again and is dumped nowhere: answers show
`reader`, a pseudonym computed at fetch time.
"""

import peewee

from models.base import BaseModel
from models.review import ReviewTask


class ReaderComment(BaseModel):
    id = peewee.AutoField()
    comment_id = peewee.CharField(max_length=40, unique=True)  # the API's id (rules.ids.new_id("cm_"))
    task = peewee.ForeignKeyField(ReviewTask, on_delete="CASCADE", index=True)
    task_id: int  # the key itself (peewee names it so); declared for the type checker
    account = peewee.CharField(max_length=64)
    msg_data_id = peewee.CharField(max_length=64)  # the send's, without an edition's `_<index>`
    article_index = peewee.IntegerField()  # the article's place in the send, from 0 (the platform's)
    user_comment_id = peewee.BigIntegerField()
    openid = peewee.CharField(max_length=128)  # never dumped (docs/api.md §23 "Readers")
    reader = peewee.CharField(max_length=16)  # the pseudonym
    content = peewee.TextField()
    created_at = peewee.CharField(max_length=32)  # ISO UTC of the platform's create_time
    featured = peewee.BooleanField(default=False)
    removed = peewee.BooleanField(default=False)  # gone from the platform's list
    reply_content = peewee.TextField(null=True)
    reply_created_at = peewee.CharField(max_length=32, null=True)
    reply_by = peewee.CharField(max_length=64, null=True)  # the admin who sent it; None: sent elsewhere
    announced = peewee.BooleanField(default=False)  # in a review_task.comments webhook already
    fetched_at = peewee.CharField(max_length=32)
    # An editor's last reply, feature or delete here: a fetch that asked the platform before it leaves the row.
    acted_at = peewee.CharField(max_length=32, null=True)

    class Meta:
        indexes = ((("account", "msg_data_id", "article_index", "user_comment_id"), True),)


class CommentProposal(BaseModel):
    id = peewee.AutoField()
    proposal_id = peewee.CharField(max_length=40, unique=True)
    comment = peewee.ForeignKeyField(ReaderComment, on_delete="CASCADE", index=True)
    comment_id: int
    content = peewee.TextField()
    created_at = peewee.CharField(max_length=32)
    state = peewee.CharField(max_length=16, default="proposed")  # proposed | sent | edited | discarded


class CommentFetch(BaseModel):
    id = peewee.AutoField()
    task = peewee.ForeignKeyField(ReviewTask, on_delete="CASCADE", index=True)
    task_id: int
    account = peewee.CharField(max_length=64)
    msg_data_id = peewee.CharField(max_length=64)
    article_index = peewee.IntegerField()
    open = peewee.BooleanField(null=True)  # as last set here; None: as the platform has it
    status = peewee.CharField(max_length=16, default="idle")  # idle | running
    owner = peewee.CharField(max_length=300, null=True)
    lease_until = peewee.CharField(max_length=32, null=True)  # a running fetch whose process stopped: taken after
    next_at = peewee.CharField(max_length=32, index=True)  # the next fetch is due then (ISO UTC)
    last_fetched_at = peewee.CharField(max_length=32, null=True)
    last_error = peewee.TextField(null=True)
    updated_at = peewee.CharField(max_length=32)

    class Meta:
        indexes = ((("account", "msg_data_id", "article_index"), True),)
