"""A job's image uploads to the platform, run concurrently: each asset uploaded once per account, then reused
(materials and uploadimg: docs/api.md §5).
"""

import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import nullcontext
from typing import Any
from urllib.parse import urlsplit

from models import Asset, db
from services.asset_refs import resolve_ref
from services.assets import asset_path
from services.images.fetch import FetchRefused, fetch_bytes
from services.platform.client import PlatformError
from services.platform.uploads import (
    cached_upload,
    claim_upload,
    forget_upload,
    held_claim,
    release_claim,
    remember_upload,
)

log = logging.getLogger(__name__)


class PublishFailed(Exception):
    """A publish step that failed for a reason other than the platform; str() is one line."""


# (asset, "material" | "uploadimg", what the job's error names it)
Needed = tuple[Asset, str, str]


class JobImages:
    """The uploads of one publish job on `client`'s account; `touch()` renews the job's claim before every
    platform call."""

    def __init__(self, client, *, uploads_root, remote_hosts, allow_private, timeout, touch, concurrency, progress):
        self.client = client
        self.concurrency = max(1, int(concurrency))
        self.progress = progress
        self.account = client.account
        self.uploads_root = uploads_root
        self.remote_hosts = [host.lower() for host in remote_hosts]
        self.allow_private = allow_private
        self.timeout = timeout
        self.touch = touch
        self.materials_used = []  # asset ids whose cached material this job sent

    def asset(self, ref: Any, what: str) -> Asset:
        """The Asset a snapshot reference ({"assetId"} or URL) names, or PublishFailed."""
        asset = resolve_ref(ref)
        if asset is None:
            shown = ref.get("assetId") if isinstance(ref, dict) else ref
            raise PublishFailed(
                f"{what} {shown} is no longer in the asset library; upload it again and publish the task anew"
            )
        return asset

    def upload_all(self, needed: list[Needed]) -> None:
        """Upload every image of the job not on the platform yet, `concurrency` at a time, so that
        material_id and body_url then answer from the cache. The first failure cancels the uploads
        not started yet and is raised naming its image; nothing else of the job runs after it."""
        todo = list({(asset.asset_id, kind): (asset, kind, what) for asset, kind, what in needed}.values())
        counted = threading.Lock()
        done = [0]

        def one(item: Needed, own_connection: bool) -> None:
            # A pool thread has no connection of its own.
            with db.connection_context() if own_connection else nullcontext():
                self._upload(*item)
                with counted:  # in order: the page never sees the count go back
                    done[0] += 1
                    self.progress(done[0], len(todo))

        self.progress(0, len(todo))
        if self.concurrency == 1 or len(todo) < 2:
            for item in todo:
                one(item, False)
            return
        with ThreadPoolExecutor(min(self.concurrency, len(todo)), thread_name_prefix="upload") as pool:
            futures = [pool.submit(one, item, True) for item in todo]
            _, running = wait(futures, return_when=FIRST_EXCEPTION)
            for future in running:
                future.cancel()  # those not started never start
            wait(running)  # those already uploading end; what they uploaded is cached for a retry
        for future in futures:  # the first failure in the job's own order
            if not future.cancelled() and future.exception() is not None:
                raise future.exception()  # type: ignore[misc]  # not None: checked just above

    def _upload(self, asset: Asset, kind: str, what: str) -> None:
        try:
            self.material_id(asset) if kind == "material" else self.body_url(asset)
        except PlatformError as exc:
            raise PlatformError(exc.errcode, f"{exc.errmsg} ({what} {asset.asset_id})", exc.rid) from None

    def material_id(self, asset: Asset) -> str:
        """media_id of the asset as a permanent image material of this account."""
        self.materials_used.append(asset.asset_id)
        if asset.platform_account == self.account and asset.platform_media_id:
            cached = cached_upload(asset.asset_id, self.account, "material")
            return cached.media_id if cached is not None and cached.media_id else asset.platform_media_id
        return self._once(asset, "material", self.client.add_material_image).media_id

    def body_url(self, asset: Asset) -> str:
        """The platform URL of the asset for use inside an article body."""
        if asset.platform_account == self.account and asset.platform_media_id and not asset.is_local:
            cached = cached_upload(asset.asset_id, self.account, "uploadimg")
            return cached.url if cached is not None and cached.url else asset.url

        def upload(name: str, data: bytes, content_type: str) -> dict[str, Any]:
            try:
                return {"url": self.client.upload_body_image(name, data, content_type)}
            except ValueError as exc:  # not convertible to a jpg/png of at most 1 MB
                raise PublishFailed(f"body image {asset.asset_id}: {exc}") from None

        return self._once(asset, "uploadimg", upload).url

    def _once(self, asset: Asset, kind: str, upload: Callable[[str, bytes, str], dict[str, Any]]) -> Any:
        """The upload row of the asset: finished already (cached, or by a job running at the same moment
        in any process on the database: claim_upload waits for it), or uploaded now by this job; a
        failed upload gives the claim up."""
        row = claim_upload(asset.asset_id, self.account, kind)
        if row is not None:
            return row
        try:
            with held_claim(asset.asset_id, self.account, kind):
                data, content_type, name = self._content(asset)
                self.touch()
                result = upload(name, data, content_type)
            return remember_upload(
                asset.asset_id, self.account, kind, media_id=result.get("media_id"), url=result.get("url")
            )
        except BaseException:
            release_claim(asset.asset_id, self.account, kind)
            raise

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
                raise PublishFailed(
                    f"image {asset.asset_id} ({asset.file_name}) is missing from the uploads folder; upload it again"
                ) from None
            return data, asset.content_type or "application/octet-stream", name
        return self._fetch(asset), asset.content_type or "application/octet-stream", name

    def _fetch(self, asset):
        """A remote library image, through the same SSRF guard as the package export."""
        host = urlsplit(asset.url).hostname or "an unknown host"
        self.touch()
        try:
            return fetch_bytes(
                asset.url, allowed_hosts=self.remote_hosts, allow_private=self.allow_private, timeout=(5, self.timeout)
            )
        except FetchRefused as exc:
            raise PublishFailed(
                f"image {asset.asset_id} could not be fetched from {host}: {exc}; "
                "check REVIEW_REMOTE_IMAGE_HOSTS or upload the image"
            ) from None
