"""Image assets (docs/api.md §6): checking uploads by decoding them, storing files (through
services.files), listing, platform sync. The stored name never comes from the client.
"""

import hashlib
import io
import logging
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import peewee

from models import Asset
from models.writes import immediate
from rules.ids import new_id, now_iso
from rules.limits import MAX_UPLOAD_BYTES
from schemas.assets import AssetSchema
from schemas.dump import dumper
from services.errors import NotFound, PayloadTooLarge, StorageUnavailable, ValidationFailed
from services.files import clean_file_name, placed_file, removals_held, write_atomically
from services.images.checks import check_size, decoded, give_back
from services.images.fetch import FetchRefused, fetch_bytes
from services.platform.uploads import remember_upload

log = logging.getLogger(__name__)

ACCEPTED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
# Pillow format -> (stored extension, Content-Type); WebP is stored converted to PNG.
STORED_AS = {
    "PNG": ("png", "image/png"),
    "JPEG": ("jpg", "image/jpeg"),
    "MPO": ("jpg", "image/jpeg"),
    "GIF": ("gif", "image/gif"),
    "WEBP": ("png", "image/png"),
}
STORED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\.(png|jpg|gif)$")


@dataclass(frozen=True)
class CheckedImage:
    data: bytes  # the bytes to store (converted for WebP)
    extension: str
    content_type: str
    width: int
    height: int


asset_view = dumper(AssetSchema)  # an asset as the API answers it


def check_image(data: bytes) -> CheckedImage:
    """Decode `data` as PNG, JPEG, GIF or WebP; CheckedImage, or ValidationFailed/PayloadTooLarge."""
    check_size(data, MAX_UPLOAD_BYTES, "image")
    checked = _checked(data)
    give_back(checked.width, checked.height)  # Pillow's WebP decoder (two frames) lived as long as its image
    return checked


def _checked(data):
    with decoded(data, ACCEPTED_FORMATS, pixels=False) as image:  # whole frames only for WebP and GIF
        image_format, (width, height) = image.format, image.size
        stored = _convert_webp(image) if image_format == "WEBP" else data
    extension, content_type = STORED_AS[str(image_format)]
    return CheckedImage(stored, extension, content_type, width, height)


def _convert_webp(image):
    """WebP -> PNG (first frame), keeping transparency and the colour profile."""
    frame = image if image.mode in ("RGB", "RGBA") else image.convert("RGBA")
    out = io.BytesIO()
    icc = image.info.get("icc_profile")
    frame.save(out, "PNG", **({"icc_profile": icc} if icc else {}))
    return out.getvalue()


def asset_path(asset: Asset, uploads_root: str | Path) -> Path | None:
    """The local file of an asset, or None for a remote one."""
    return Path(uploads_root) / asset.scope / str(asset.stored_name) if asset.is_local else None


def get_asset(asset_id: str) -> Asset:
    """The asset with this id, or NotFound."""
    asset = Asset.get_or_none(Asset.asset_id == asset_id)
    if asset is None:
        raise NotFound(f"no asset with id {asset_id}")
    return asset


def save_upload(data: bytes, *, scope: str, file_name: str | None, uploads_root: str) -> tuple[Asset, bool]:
    """Check and store an uploaded image; (asset, created). Same bytes in the same scope: (existing, False)."""
    if scope not in ("review", "library"):
        raise ValidationFailed(f"unknown scope {scope!r}", {"scope": ["must be review or library"]})
    checked = check_image(data)
    digest = hashlib.sha256(checked.data).hexdigest()
    existing = Asset.get_or_none((Asset.scope == scope) & (Asset.sha256 == digest))
    if existing is not None and (again := _handed_out_again(existing, checked.data, uploads_root)) is not None:
        return again, False
    asset_id = new_id()
    stored_name = f"{asset_id}.{checked.extension}"
    try:
        with placed_file(uploads_root, Path(uploads_root) / scope, stored_name, checked.data) as placement:
            with immediate():
                asset = Asset.create(
                    asset_id=asset_id,
                    scope=scope,
                    url=f"/uploads/{scope}/{stored_name}",
                    stored_name=stored_name,
                    file_name=clean_file_name(file_name, f"image.{checked.extension}"),
                    content_type=checked.content_type,
                    width=checked.width,
                    height=checked.height,
                    size=len(checked.data),
                    sha256=digest,
                    created_at=now_iso(),
                )
                placement.settle()
    except peewee.IntegrityError:
        # Another request stored the same bytes in the same scope a moment ago: that one wins.
        winner = Asset.get_or_none((Asset.scope == scope) & (Asset.sha256 == digest))
        again = _handed_out_again(winner, checked.data, uploads_root) if winner is not None else None
        if again is None:
            raise
        return again, False
    except OSError as exc:
        log.error("image %s not written: %s", stored_name, type(exc).__name__)
        raise StorageUnavailable("the image could not be written to disk; nothing was saved, try again later") from None
    return asset, True


def _handed_out_again(asset: Asset, data: bytes, uploads_root: str) -> Asset | None:
    """The asset answered to an upload of its bytes: marked shared (its holders are no longer only its tasks, so a
    task's deletion keeps it: the mark and a deletion's check are both made in the write lock), its file written
    again if it went missing, under its folder's removal lock. None: the row went meanwhile (a deletion); the
    caller stores the bytes anew."""
    current: Asset | None = asset
    if asset.scope == "review" and not asset.shared:
        with immediate():
            current = Asset.get_or_none(Asset.id == asset.id)
            if current is not None and not current.shared:
                Asset.update(shared=True).where(Asset.id == asset.id).execute()
                current.shared = True
    path = asset_path(current, uploads_root) if current is not None else None
    if path is None or path.exists():
        return current
    with removals_held(path.parent):  # a deletion that set the file aside has committed, or not begun
        current = Asset.get_or_none(Asset.id == asset.id)
        if current is not None and not path.exists():
            log.warning("asset %s: file %s was missing, written again from an identical upload", asset.asset_id, path)
            try:
                write_atomically(path.parent, path.name, data)
            except OSError as exc:
                log.error("image %s not written again: %s", path.name, type(exc).__name__)
                raise StorageUnavailable("the image could not be written to disk; try again later") from None
    return current


def list_assets(
    scope: str = "library", q: str | None = None, page: int = 1, page_size: int = 20
) -> tuple[list[Asset], int]:
    """(assets of the page, total matches); newest first. scope: library | review | all."""
    query = Asset.select()
    if scope != "all":
        query = query.where(Asset.scope == scope)
    if q:
        query = query.where(Asset.file_name.contains(q))
    return list(query.order_by(Asset.created_at.desc(), Asset.id.desc()).paginate(page, page_size)), query.count()


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    unmeasured: int = 0  # images whose size could not be read (such an image cannot be a cover)


def sync_platform_images(
    client: Any, account: str, report: "SyncReport | None" = None, measure: Any = None
) -> "SyncReport":
    """Keep every image material of `account` (a PlatformClient of it) as a remote library asset with its
    media_id, recorded as the account's uploaded "material" too, so publishing it there does not upload it
    again. Pass a SyncReport to keep the counts when the platform fails half way. `measure(url)` gives
    (width, height) or None: a cover must have a known size, so each new or changed material is measured.
    """
    report = report if report is not None else SyncReport()
    for item in client.iter_image_materials():  # no transaction is open while the next page loads
        media_id, url = str(item.get("media_id") or ""), str(item.get("url") or "")
        if not media_id or not url.startswith(("https://", "http://")):
            log.warning("platform %s: image material without media_id or URL skipped", account)
            report.skipped += 1
            continue
        name = clean_file_name(item.get("name"), media_id)
        mine = (Asset.platform_account == account) & (Asset.platform_media_id == media_id)
        known = Asset.get_or_none(mine)
        size = (known.width, known.height) if known is not None and known.url == url and known.width else None
        if size is None and measure is not None:  # fetched outside the transaction
            size = measure(url)
            report.unmeasured += size is None
        width, height = size or (None, None)
        with immediate():
            asset = Asset.get_or_none(mine)
            if asset is None:
                asset = Asset.create(
                    asset_id=new_id(),
                    scope="library",
                    url=url,
                    stored_name=None,
                    file_name=name,
                    content_type=_remote_content_type(name, url),
                    platform_account=account,
                    platform_media_id=media_id,
                    width=width,
                    height=height,
                    created_at=now_iso(),
                )
                report.added += 1
            elif (asset.url, asset.file_name, asset.width, asset.height) != (url, name, width, height):
                asset.url, asset.file_name, asset.width, asset.height = url, name, width, height
                asset.content_type = _remote_content_type(name, url) or asset.content_type
                asset.save()
                report.updated += 1
            else:
                report.unchanged += 1
            remember_upload(asset.asset_id, account, "material", media_id=media_id, url=url)
    return report


def remote_size(url: str, *, allowed_hosts: Any, allow_private: bool = False) -> tuple[int, int] | None:
    """(width, height) of the image at `url` (fetched with the remote-image guard), or None."""
    try:
        image = check_image(fetch_bytes(url, allowed_hosts=allowed_hosts, allow_private=allow_private))
    except (FetchRefused, ValidationFailed, PayloadTooLarge) as exc:
        log.warning("size of %s not read: %s", url, exc)
        return None
    return image.width, image.height


def _remote_content_type(name, url):
    """From the material's name, else the platform's `wx_fmt=` hint, else the URL's extension."""
    fmt = re.search(r"[?&]wx_fmt=(\w+)", url)
    for guess in (
        mimetypes.guess_type(name)[0],
        mimetypes.guess_type(f"x.{fmt.group(1)}")[0] if fmt else None,
        mimetypes.guess_type(url.split("?", 1)[0])[0],
    ):
        if guess and guess.startswith("image/"):
            return guess
    return ""
