"""What the service remembers about the WeChat platform: access tokens and uploaded images."""

import peewee

from models.base import BaseModel


class PlatformToken(BaseModel):
    """The current access token of one account, shared by every thread and process."""

    id = peewee.AutoField()
    account = peewee.CharField(max_length=64, unique=True)
    access_token = peewee.TextField()
    expires_at = peewee.CharField(max_length=32)  # ISO UTC; the token is used until 5 min before
    updated_at = peewee.CharField(max_length=32)


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
