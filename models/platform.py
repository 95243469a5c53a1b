"""What the service remembers about the WeChat platform: access tokens and uploaded images."""

import peewee

from models.base import BaseModel
from models.writes import immediate


class PlatformToken(BaseModel):
    """The current access token of one account, shared by every thread and process."""

    id = peewee.AutoField()
    account = peewee.CharField(max_length=64, unique=True)
    access_token = peewee.TextField()
    expires_at = peewee.CharField(max_length=32)  # ISO UTC; the token is used until 5 min before
    updated_at = peewee.CharField(max_length=32)
    forced_at = peewee.CharField(max_length=32, null=True)  # the last forced stable_token refresh (any process)


def claim_forced_refresh(account: str, now: str, earliest: str) -> bool:
    """True for the one caller, of every thread and process, that may force a refresh of `account`'s token
    now: none was forced since `earliest` (ISO UTC). A compare-and-set of forced_at under the write lock."""
    with immediate():
        free = PlatformToken.forced_at.is_null() | (PlatformToken.forced_at < earliest)
        if PlatformToken.update(forced_at=now).where((PlatformToken.account == account) & free).execute():
            return True
        if PlatformToken.get_or_none(PlatformToken.account == account) is not None:
            return False
        # No token stored yet (nothing to compare): the claim is the row, with no usable token in it.
        PlatformToken.insert(account=account, access_token="", expires_at=now, updated_at=now, forced_at=now).execute()
        return True


class PlatformUpload(BaseModel):
    """One asset uploaded to one account, so a retried publish does not upload it again.

    kind "material" (material/add_material: media_id and url) or "uploadimg" (media/uploadimg: url).
    """

    id = peewee.AutoField()
    asset_id = peewee.CharField(max_length=64)
    account = peewee.CharField(max_length=64)
    kind = peewee.CharField(max_length=16)
    media_id = peewee.CharField(max_length=255, null=True)
    url = peewee.TextField(null=True)
    created_at = peewee.CharField(max_length=32)

    class Meta:
        indexes = ((("asset_id", "account", "kind"), True),)
