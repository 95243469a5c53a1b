"""Journals of files whose record is not settled yet: files being placed, review files of deleted tasks."""

import peewee

from models.base import BaseModel


class PendingFile(BaseModel):
    id = peewee.AutoField()
    path = peewee.CharField(max_length=512, unique=True)  # relative to the uploads folder
    pid = peewee.IntegerField()  # the process placing it; a dead process's entries are swept
    owner = peewee.CharField(max_length=300, null=True)  # that process with its host (services.owners)
    created_at = peewee.CharField(max_length=32)


class AssetCleanup(BaseModel):
    """A review asset of a deleted task, still to be removed (or kept when another task uses it).

    Written in the transaction that deletes the task, so a stop before its file is gone is finished
    at the next start instead of leaving the file and its row for good.
    """

    id = peewee.AutoField()
    asset_id = peewee.CharField(max_length=64, unique=True)
    created_at = peewee.CharField(max_length=32)
