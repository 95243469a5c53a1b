"""The journal of files being placed next to a record that is not yet committed."""
import peewee

from models.base import BaseModel


class PendingFile(BaseModel):
    path = peewee.CharField(max_length=512, unique=True)  # relative to the uploads folder
    pid = peewee.IntegerField()  # the process placing it; a dead process's entries are swept
    created_at = peewee.CharField(max_length=32)
