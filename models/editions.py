"""Editions (docs/api.md §21; states: docs/review-states.md "Editions"): the day's articles sent to an account's
followers as one message (群发). `sending` is written before message/mass/sendall is called, with the caller
(`owner`) and a lease (`next_at`), so a call repeated after a crash reuses the clientmsgid (the edition's id).
"""

import peewee

from models.base import BaseModel, JSONField


class Edition(BaseModel):
    id = peewee.AutoField()
    edition_id = peewee.CharField(max_length=40, unique=True)
    account = peewee.CharField(max_length=64, index=True)
    status = peewee.CharField(max_length=16, index=True)
    task_ids = JSONField()  # the tasks' ids in order: the first is the headline (头条)
    send_at = peewee.CharField(max_length=32, null=True, index=True)  # ISO UTC; None until sent or scheduled
    tag_id = peewee.IntegerField(null=True)  # None: every follower
    ignore_reprint = peewee.BooleanField(default=False)
    draft_media_id = peewee.CharField(max_length=255, null=True)  # the combined draft
    msg_id = peewee.CharField(max_length=64, null=True, index=True)
    msg_data_id = peewee.CharField(max_length=64, null=True)
    counts = JSONField(null=True)  # {"total", "filter", "sent", "error"} from MASSSENDJOBFINISH
    article_urls = JSONField(null=True)  # [url | None] by position
    fail_reason = peewee.TextField(null=True)  # the API's English sentence
    fail_code = peewee.CharField(max_length=32, null=True)  # rules/labels.py EDITION_FAILURE_LABELS
    fail_detail = peewee.TextField(null=True)
    owner = peewee.CharField(max_length=300, null=True)  # the process calling sendall (services.owners)
    next_at = peewee.CharField(max_length=32, null=True, index=True)  # the next sendall or mass/get; None: none
    attempts = peewee.IntegerField(default=0)  # sendall calls made
    polls = peewee.IntegerField(default=0)
    sent_at = peewee.CharField(max_length=32, null=True)
    created_by = peewee.CharField(max_length=64, null=True)  # an admin's name; None: the agent
    created_at = peewee.CharField(max_length=32)
    updated_at = peewee.CharField(max_length=32)
    version = peewee.IntegerField(default=1)


def holders(
    statuses: tuple[str, ...], task_ids: list[str] | None, account: str | None = None, besides: int | None = None
) -> dict[str, Edition]:
    """{task id: the oldest edition in one of `statuses` whose tasks include it} for those of `task_ids` (None:
    every task) an edition holds; only `account`'s editions when given, never the edition `besides` (its own tasks). Few
    editions are open at once, and `task_ids` is a JSON list, so they are looked through here."""
    query = Edition.select().where(Edition.status.in_(statuses))
    if account is not None:
        query = query.where(Edition.account == account)
    if besides is not None:
        query = query.where(Edition.id != besides)
    wanted = set(task_ids) if task_ids is not None else None
    held: dict[str, Edition] = {}
    for edition in query.order_by(Edition.id):
        for task_id in edition.task_ids or []:
            if wanted is None or task_id in wanted:
                held.setdefault(task_id, edition)
    return held


class EarlyMassEvent(BaseModel):
    """A MASSSENDJOBFINISH that came before the sendall answer naming its msg_id (docs/api.md §21): kept while
    a send of its account is in flight, and applied when that answer is recorded."""

    id = peewee.AutoField()
    account = peewee.CharField(max_length=64)
    msg_id = peewee.CharField(max_length=64)
    xml = peewee.TextField()  # the event as opened (at most 64 KiB, services/live/events.py)
    received_at = peewee.CharField(max_length=32, index=True)  # ISO UTC

    class Meta:
        indexes = ((("account", "msg_id"), True),)
