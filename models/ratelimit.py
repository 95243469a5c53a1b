"""Rate-limit hits (docs/api.md §9), in the database so every service process on it counts together."""

import peewee

from models.base import BaseModel


class RateHit(BaseModel):
    """One admitted request, counted against one key of one category (ip, device, version, channel)."""

    id = peewee.AutoField()
    category = peewee.CharField(max_length=16)
    key = peewee.CharField(max_length=600)
    at = peewee.DoubleField()  # Unix seconds: one clock for every process

    class Meta:
        indexes = ((("category", "key", "at"), False),)
