"""The ZIP package of a task (docs/api.md §7, docs/package-and-delete.md "Package"): every final image
checked first, in a fresh `package-*` directory, then one archive. Images are copied in chunks and stored,
not recompressed (they are compressed already), so memory stays flat however large the task is.
"""

import errno
import hashlib
import os
import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from services.asset_refs import ref_key, resolve_many
from services.errors import Conflict, StorageUnavailable
from services.export.manuscript import article, image_post, rewrite_images, topic_only
from services.export.package_images import FaultyImage, check_decodable, open_local
from services.files import left_behind
from services.images.fetch import FetchRefused, fetch_to_file
from services.owners import file_tag
from services.rendering import image_urls
from services.review.concurrency import get_task_row
from services.settings import Settings

TEMP_PREFIX = "package-"  # <TEMP_PREFIX><file_tag>-<random>
LOCAL_SCOPES = ("review", "library")
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class PackageFile:
    """A built archive in its own temporary directory; cleanup() removes both."""

    path: str
    directory: str
    download_name: str

    def cleanup(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass
class _Source:
    """One distinct image to check (an asset, or a remote URL that is no asset)."""

    ref: object  # as written in the task, for the error details
    where: str
    scope: str | None = None  # review | library, for a stored file
    local: str | None = None  # stored file
    remote: str | None = None  # URL to fetch
    problem: str | None = None  # known faulty before any check
    file: str | None = None  # the checked image's copy in the work folder, for the archive
    ext: str | None = None


@dataclass
class _Plan:
    sources: dict = field(default_factory=dict)  # key -> _Source
    entries: list = field(default_factory=list)  # (stem, source key), archive order

    def add(self, stem, key, source):
        self.sources.setdefault(key, source)
        if (stem, key) not in self.entries:
            self.entries.append((stem, key))
        return stem

    def path(self, stem, key):
        return f"images/{stem}.{self.sources[key].ext}"


def _stem(asset_id):
    """Archive names are built from generated asset ids; anything else is hashed, never copied."""
    return asset_id if SAFE_ID.match(asset_id) else hashlib.sha256(asset_id.encode()).hexdigest()[:24]


def _shown(ref):
    key = ref_key(ref)
    return key[1] if key else ref


def _asset_source(asset, ref, where, uploads_root):
    if asset is None:
        return f"missing:{_shown(ref)}", _Source(_shown(ref), where, problem="the asset no longer exists")
    source = _Source(_shown(ref), where)
    if asset.is_local and asset.scope not in LOCAL_SCOPES:
        source.problem = f"the asset has the unknown scope {asset.scope!r}"
    elif asset.is_local:
        source.scope, source.local = asset.scope, os.path.join(uploads_root, asset.scope, asset.stored_name)
    else:
        source.remote = asset.url
    return f"asset:{asset.asset_id}", source


def _plan_article(task, plan, uploads_root):
    selections = task.selections or {}
    body = (task.body_draft or {}).get("markdown") if task.body_draft else selections.get("body")
    cover = selections.get("coverImage")
    body_refs = list(selections.get("bodyImages") or [])
    links = image_urls(body or "")
    assets = resolve_many(([cover] if cover is not None else []) + body_refs + links)
    offset = 1 if cover is not None else 0
    cover_item = None
    if cover is not None:
        key, source = _asset_source(assets[0], cover, "selections.coverImage", uploads_root)
        stem = "cover-" + _stem(key.split(":", 1)[1])
        cover_item = (plan.add(stem, key, source), key)
    body_items = []
    for index, ref in enumerate(body_refs):
        key, source = _asset_source(assets[offset + index], ref, f"selections.bodyImages.{index}", uploads_root)
        body_items.append((plan.add(_stem(key.split(":", 1)[1]), key, source), key))
    links_at = offset + len(body_refs)
    link_items = {}
    for index, src in enumerate(links):
        asset = assets[links_at + index]
        if asset is not None:
            key, source = _asset_source(asset, src, "body", uploads_root)
            stem = _stem(asset.asset_id)
        else:
            # An image link that is no asset: fetched like a remote library image (docs/package-and-delete.md).
            key, stem = f"url:{src}", "external-" + hashlib.sha256(src.encode()).hexdigest()[:16]
            source = _Source(src, "body", remote=src)
        link_items[src] = (plan.add(stem, key, source), key)
    # A plain hyperlink to the cover or a selected body image opens its file in the archive too.
    chosen = ([(cover, assets[0], cover_item)] if cover_item else []) + [
        (ref, assets[offset + index], body_items[index]) for index, ref in enumerate(body_refs)
    ]
    for ref, asset, item in chosen:
        for name in (ref if isinstance(ref, str) else None, asset.url if asset else None):
            if name:
                link_items.setdefault(name, item)
    return body, cover_item, body_items, link_items


def _plan_image_post(task, plan, uploads_root):
    refs = list((task.selections or {}).get("images") or [])
    assets = resolve_many(refs)
    items = []
    for index, ref in enumerate(refs):
        key, source = _asset_source(assets[index], ref, f"selections.images.{index}", uploads_root)
        items.append((plan.add(f"{index + 1:02d}-{_stem(key.split(':', 1)[1])}", key, source), key))
    return items


def _check_sources(plan, uploads_root, workdir, remote_hosts, allow_private):
    faulty = []
    for number, source in enumerate(plan.sources.values()):
        try:
            if source.problem:
                raise FaultyImage(source.problem)
            copy = os.path.join(workdir, f"image-{number}")
            if source.local is not None:
                # Checked and copied from one open file: a task deletion removing it meanwhile changes nothing.
                with open_local(source.local, os.path.join(uploads_root, source.scope)) as stored:
                    source.ext = check_decodable(stored)
                    stored.seek(0)
                    with open(copy, "wb") as target:
                        shutil.copyfileobj(stored, target)
            else:
                try:
                    fetch_to_file(source.remote, copy, allowed_hosts=remote_hosts, allow_private=allow_private)
                except FetchRefused as exc:
                    raise FaultyImage(str(exc)) from None
                with open(copy, "rb") as fetched:
                    source.ext = check_decodable(fetched)
            source.file = copy
        except FaultyImage as exc:
            faulty.append({"ref": source.ref, "field": source.where, "reason": str(exc)})
    if faulty:
        raise Conflict(
            f"{len(faulty)} final image(s) of the task are missing or faulty; fix or replace them and download again",
            {"faultyImages": faulty},
            code="export_failed",
        )


def _manuscript(task, plan, planned):
    if not task.selections:
        return topic_only(task)
    if task.content_type == "image_post":
        return image_post(task, task.selections, [plan.path(*item) for item in planned])
    body, cover_item, body_items, link_items = planned
    mapping = {src: plan.path(*item) for src, item in link_items.items()}
    if body is not None:
        body, left = rewrite_images(body, mapping)
        if left:
            reason = (
                "some Markdown reader would load this from outside the archive (image or raw HTML "
                "syntax the rewriter cannot point into images/); simplify it in the body"
            )
            raise Conflict(
                "an image of the body could not be pointed into the archive",
                {"faultyImages": [{"ref": src, "field": "body", "reason": reason} for src in left]},
                code="export_failed",
            )
    return article(
        task,
        task.selections,
        body,
        plan.path(*cover_item) if cover_item else None,
        [plan.path(*item) for item in body_items],
        (task.body_draft or {}).get("themeTemplate"),
    )


def _write_zip(path, text, plan):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        stamp = time.gmtime()[:6]
        info = zipfile.ZipInfo("manuscript.md", stamp)
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, text.encode("utf-8"))
        archive.writestr(zipfile.ZipInfo("images/", stamp), b"")
        for stem, key in plan.entries:
            entry = zipfile.ZipInfo(plan.path(stem, key), stamp)  # UTC, as manuscript.md; not the copy's
            entry.external_attr = 0o644 << 16  # rw-r--r-- when unpacked, whatever the umask made the copy
            entry.file_size = os.path.getsize(plan.sources[key].file)
            with open(plan.sources[key].file, "rb") as source, archive.open(entry, "w") as target:
                shutil.copyfileobj(source, target)


def sweep_stale(temp_root: str | Path, at_start: bool = False) -> None:
    """Remove package directories a crashed process left behind (services.files.left_behind)."""
    for entry in Path(temp_root).glob(TEMP_PREFIX + "*"):
        if left_behind(entry.name[len(TEMP_PREFIX) :].split("-", 1)[0], entry, at_start):
            shutil.rmtree(entry, ignore_errors=True)


def build_package(task_id: str, settings: Settings) -> PackageFile:
    """A PackageFile for the task (NotFound; Conflict export_failed listing every faulty image)."""
    uploads_root, temp_root = settings.uploads_path, settings.temp_path
    task = get_task_row(task_id)
    plan = _Plan()
    if not task.selections:
        planned = None
    elif task.content_type == "image_post":
        planned = _plan_image_post(task, plan, uploads_root)
    else:
        planned = _plan_article(task, plan, uploads_root)
    workdir = None
    try:
        Path(temp_root).mkdir(parents=True, exist_ok=True)
        sweep_stale(temp_root)
        workdir = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{file_tag()}-", dir=temp_root)
        try:
            _check_sources(
                plan, uploads_root, workdir, settings.remote_image_hosts, settings.remote_image_allow_private
            )
        except Conflict:
            get_task_row(task_id)  # deleted meanwhile, its files with it: 404, not faulty images
            raise
        text = _manuscript(task, plan, planned)
        path = os.path.join(workdir, "package.zip")
        _write_zip(path, text, plan)
        for source in plan.sources.values():
            os.unlink(source.file)  # only the archive stays while it is streamed
    except BaseException as exc:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageUnavailable(
                "the package could not be written: no space left in the instance folder; "
                "free some space and download again"
            ) from None
        raise
    return PackageFile(path, workdir, f"review-{task.task_id}.zip")
