"""A job's images on the platform: each asset uploaded once per account, then reused (cached).

Covers and image-post images become permanent materials (material/add_material -> media_id);
images inside an article body go through media/uploadimg (-> URL). A library asset synced from
the same account already is a material: its media_id and URL are used as they are.
"""
import logging
from typing import Any
from urllib.parse import urlsplit

from models import Asset
from services.asset_refs import resolve_ref
from services.assets import asset_path
from services.platform_client import cached_upload, forget_upload, remember_upload
from services.remote_images import FetchRefused, fetch_bytes

log = logging.getLogger(__name__)


class PublishFailed(Exception):
    """A publish step that failed for a reason other than the platform; str() is one line."""


class JobImages:
    """The uploads of one publish job on `client`'s account.

    `touch()` is called before every platform call (it renews the job's claim on the task).
    """

    def __init__(self, client, *, uploads_root, remote_hosts=(), allow_private=False, timeout=20, touch=None):
        self.client = client
        self.account = client.account
        self.uploads_root = uploads_root
        self.remote_hosts = [host.lower() for host in remote_hosts]
        self.allow_private = allow_private
        self.timeout = timeout
        self.touch = touch or (lambda: None)
        self.materials_used = []  # asset ids whose cached material this job sent

    def asset(self, ref: Any, what: str) -> Asset:
        """The Asset a snapshot reference ({"assetId"} or URL) names, or PublishFailed."""
        asset = resolve_ref(ref)
        if asset is None:
            shown = ref.get("assetId") if isinstance(ref, dict) else ref
            raise PublishFailed(f"{what} {shown} is no longer in the asset library; upload it again and "
                                "publish the task anew")
        return asset

    def material_id(self, asset: Asset) -> str:
        """media_id of the asset as a permanent image material of this account."""
        self.materials_used.append(asset.asset_id)
        cached = cached_upload(asset.asset_id, self.account, "material")
        if cached is not None and cached.media_id:
            return cached.media_id
        if asset.platform_account == self.account and asset.platform_media_id:
            return asset.platform_media_id
        data, content_type, name = self._content(asset)
        self.touch()
        result = self.client.add_material_image(name, data, content_type)
        remember_upload(asset.asset_id, self.account, "material", media_id=result["media_id"], url=result["url"])
        return result["media_id"]

    def body_url(self, asset: Asset) -> str:
        """The platform URL of the asset for use inside an article body."""
        cached = cached_upload(asset.asset_id, self.account, "uploadimg")
        if cached is not None and cached.url:
            return cached.url
        if asset.platform_account == self.account and asset.platform_media_id and not asset.is_local:
            return asset.url
        data, content_type, name = self._content(asset)
        self.touch()
        try:
            url = self.client.upload_body_image(name, data, content_type)
        except ValueError as exc:  # not convertible to a jpg/png of at most 1 MB
            raise PublishFailed(f"body image {asset.asset_id}: {exc}") from None
        remember_upload(asset.asset_id, self.account, "uploadimg", url=url)
        return url

    def forget_materials(self) -> None:
        """The platform no longer knows a material we sent (40007): upload them again next time."""
        for asset_id in dict.fromkeys(self.materials_used):
            forget_upload(asset_id, self.account, "material")

    # ---- the bytes of an asset ---------------------------------------------------------------
    def _content(self, asset):
        """(data, content_type, file name) of a local file or an allowed remote image."""
        name = asset.stored_name or asset.file_name or f"{asset.asset_id}.png"
        local = asset_path(asset, self.uploads_root)
        if local is not None:
            try:
                data = local.read_bytes()
            except OSError:
                raise PublishFailed(f"image {asset.asset_id} ({asset.file_name}) is missing from the uploads "
                                    "folder; upload it again") from None
            return data, asset.content_type or "application/octet-stream", name
        return self._fetch(asset), asset.content_type or "application/octet-stream", name

    def _fetch(self, asset):
        """A remote library image, through the same SSRF guard as the package export."""
        host = urlsplit(asset.url).hostname or "an unknown host"
        self.touch()
        try:
            return fetch_bytes(asset.url, allowed_hosts=self.remote_hosts, allow_private=self.allow_private,
                               timeout=(5, self.timeout))
        except FetchRefused as exc:
            raise PublishFailed(f"image {asset.asset_id} could not be fetched from {host}: {exc}; "
                                "check REVIEW_REMOTE_IMAGE_HOSTS or upload the image") from None
