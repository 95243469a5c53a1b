"""Upload cache: a retried publish reuses what an earlier attempt uploaded for the same asset, and
a claim row keeps two jobs (in any process on the database) from uploading one asset at once."""

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from models.base import db
from models.platform import PlatformUpload
from models.writes import immediate
from rules.ids import iso, now_iso, utcnow

log = logging.getLogger(__name__)
UPLOAD_KINDS = ("material", "uploadimg")
# A claim not renewed for this long (its process stopped) is taken over. held_claim() renews it while the
# upload runs, however long its deadline lets it take (a 10 MiB material at the slowest uplink, a token renewed).
CLAIM_SECONDS = 120
POLL_SECONDS = 0.1


def _this(asset_id: str, account: str, kind: str) -> Any:
    """The condition picking this asset's upload on this account."""
    if kind not in UPLOAD_KINDS:
        raise ValueError(f"upload kind must be one of {', '.join(UPLOAD_KINDS)}, not {kind!r}")
    return (PlatformUpload.asset_id == asset_id) & (PlatformUpload.account == account) & (PlatformUpload.kind == kind)


def _store(asset_id: str, account: str, kind: str, media_id: str | None, url: str | None) -> None:
    """Insert or replace the row (a claim's holds neither media_id nor url); inside a write transaction."""
    PlatformUpload.insert(
        asset_id=asset_id, account=account, kind=kind, media_id=media_id, url=url, created_at=now_iso()
    ).on_conflict(
        conflict_target=[PlatformUpload.asset_id, PlatformUpload.account, PlatformUpload.kind],
        preserve=[PlatformUpload.media_id, PlatformUpload.url, PlatformUpload.created_at],
    ).execute()


def cached_upload(asset_id: str, account: str, kind: str) -> PlatformUpload | None:
    """The PlatformUpload row (media_id, url) of this asset on this account, or None."""
    return PlatformUpload.get_or_none(_this(asset_id, account, kind))


def remember_upload(
    asset_id: str, account: str, kind: str, media_id: str | None = None, url: str | None = None
) -> PlatformUpload | None:
    """Record (or replace) the upload of an asset; returns the stored row."""
    _this(asset_id, account, kind)
    with immediate():
        _store(asset_id, account, kind, media_id, url)
    return cached_upload(asset_id, account, kind)


def forget_upload(asset_id: str, account: str, kind: str) -> None:
    """Drop a cached upload the platform no longer knows (e.g. a deleted material: 40007)."""
    PlatformUpload.delete().where(_this(asset_id, account, kind)).execute()


def _finished(row: PlatformUpload | None, kind: str) -> bool:
    return row is not None and bool(row.media_id if kind == "material" else row.url)


def claim_upload(asset_id: str, account: str, kind: str) -> PlatformUpload | None:
    """The finished upload of this asset on this account, or None: then the caller holds the claim
    and uploads it (remember_upload fills the row; release_claim gives it up on failure). While
    another job, in this process or another, holds a fresh claim, waits for its result."""
    _this(asset_id, account, kind)
    while True:
        with immediate():
            row = cached_upload(asset_id, account, kind)
            if _finished(row, kind):
                return row
            if row is None or row.created_at < iso(utcnow() - timedelta(seconds=CLAIM_SECONDS)):
                _store(asset_id, account, kind, None, None)
                return None
        time.sleep(POLL_SECONDS)  # another job is uploading it: its answer will do for this one too


def _unfinished(asset_id: str, account: str, kind: str) -> Any:
    return _this(asset_id, account, kind) & PlatformUpload.media_id.is_null() & PlatformUpload.url.is_null()


@contextmanager
def held_claim(asset_id: str, account: str, kind: str) -> Iterator[None]:
    """While the block uploads: the claim renewed every quarter of CLAIM_SECONDS, on a thread of its own (the
    upload blocks in its call), so no other job takes it over meanwhile; a stopped process renews nothing."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(CLAIM_SECONDS / 4):
            try:
                with db.connection_context(), immediate():
                    PlatformUpload.update(created_at=now_iso()).where(_unfinished(asset_id, account, kind)).execute()
            except Exception:  # the upload goes on; at worst another job uploads the asset too
                log.exception("the upload claim of %s on %s could not be renewed", asset_id, account)

    renewing = threading.Thread(target=renew, name=f"upload-claim-{asset_id}", daemon=True)
    renewing.start()
    try:
        yield
    finally:
        stop.set()
        renewing.join()


def release_claim(asset_id: str, account: str, kind: str) -> None:
    """Give up an unfinished claim (the upload failed), so the next job uploads the asset."""
    with immediate():
        PlatformUpload.delete().where(_unfinished(asset_id, account, kind)).execute()
