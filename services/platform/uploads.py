"""Upload cache: a retried publish reuses what an earlier attempt uploaded for the same asset."""
from models.base import immediate
from models.platform import PlatformUpload
from rules.ids import now_iso

UPLOAD_KINDS = ("material", "uploadimg")


def cached_upload(asset_id: str, account: str, kind: str) -> PlatformUpload | None:
    """The PlatformUpload row (media_id, url) of this asset on this account, or None."""
    _check_kind(kind)
    return PlatformUpload.get_or_none((PlatformUpload.asset_id == asset_id)
                                      & (PlatformUpload.account == account)
                                      & (PlatformUpload.kind == kind))


def remember_upload(asset_id: str, account: str, kind: str, media_id: str | None = None,
                    url: str | None = None) -> PlatformUpload | None:
    """Record (or replace) the upload of an asset; returns the stored row."""
    _check_kind(kind)
    with immediate():
        PlatformUpload.insert(asset_id=asset_id, account=account, kind=kind, media_id=media_id,
                              url=url, created_at=now_iso()).on_conflict(
            conflict_target=[PlatformUpload.asset_id, PlatformUpload.account, PlatformUpload.kind],
            update={PlatformUpload.media_id: media_id, PlatformUpload.url: url,
                    PlatformUpload.created_at: now_iso()}).execute()
    return cached_upload(asset_id, account, kind)


def forget_upload(asset_id: str, account: str, kind: str) -> None:
    """Drop a cached upload the platform no longer knows (e.g. a deleted material: 40007)."""
    _check_kind(kind)
    PlatformUpload.delete().where((PlatformUpload.asset_id == asset_id)
                                  & (PlatformUpload.account == account)
                                  & (PlatformUpload.kind == kind)).execute()


def _check_kind(kind):
    if kind not in UPLOAD_KINDS:
        raise ValueError(f"upload kind must be one of {', '.join(UPLOAD_KINDS)}, not {kind!r}")
