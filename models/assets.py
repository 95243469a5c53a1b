"""Images that tasks refer to: local uploads (review/library scope) and remote platform materials."""

import peewee

from models.base import BaseModel


class Asset(BaseModel):
    id = peewee.AutoField()
    asset_id = peewee.CharField(max_length=64, unique=True)
    scope = peewee.CharField(max_length=16, index=True)  # review | library
    url = peewee.CharField(max_length=1024, index=True)  # /uploads/<scope>/<file> or remote URL
    stored_name = peewee.CharField(max_length=128, null=True)  # file under uploads/<scope>/; None if remote
    file_name = peewee.CharField(max_length=255, default="")  # client's name, cleaned, display only
    content_type = peewee.CharField(max_length=64, default="")
    width = peewee.IntegerField(null=True)
    height = peewee.IntegerField(null=True)
    size = peewee.IntegerField(null=True)
    sha256 = peewee.CharField(max_length=64, null=True)
    platform_account = peewee.CharField(max_length=32, null=True)  # synced platform material
    platform_media_id = peewee.CharField(max_length=128, null=True)
    created_at = peewee.CharField(max_length=32, index=True)
    # Handed out again, to an upload of the same bytes: someone besides its tasks may hold it, so a task's
    # deletion keeps it (services/task_delete.py).
    shared = peewee.BooleanField(default=False, null=True)  # null: from a process of an older release

    class Meta:
        indexes = (
            (("scope", "sha256"), True),
            (("platform_account", "platform_media_id"), True),
        )

    @property
    def is_local(self) -> bool:
        return self.stored_name is not None
