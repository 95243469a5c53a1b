"""Signed pushes already taken (docs/api.md §18): one row per once-only key accepted within the age window
(`nonce` holds the query's signature where it sorts timestamp and nonce, with `timestamp` 0; else the
nonce with its timestamp: services/platform/pushes.first_time), so a replay changes nothing in any process.
Rows older than the window are removed as new ones arrive: a replay that old is refused by its timestamp."""

import peewee

from models.base import BaseModel


class SeenNonce(BaseModel):
    id = peewee.AutoField()
    scope = peewee.CharField(max_length=96)  # who signed it: "wechat:<account>"
    timestamp = peewee.BigIntegerField()
    nonce = peewee.CharField(max_length=64)
    seen_at = peewee.CharField(max_length=32, index=True)  # ISO UTC

    class Meta:
        indexes = ((("scope", "timestamp", "nonce"), True),)
