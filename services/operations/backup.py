"""One archive of an instance (docs/api.md §11; README "Where data lives, backup and restore"): the database copy,
the secret key, config.py, every file a row of that copy names (linked while deletions wait, so no row points at a
file the archive lacks), and `manifest.json` last: schema version, rows per table, file count, each member's
SHA-256 and size.
"""

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from models.backup_copy import copy_database_to, row_counts, schema_version, stored_files
from rules.ids import now_iso
from services.files import left_behind, pinned, removals_held, sweep_pins
from services.owners import file_tag
from services.settings import Settings

FORMAT = "content-review-backup/1"
MANIFEST = "manifest.json"
DATABASE = "instance/review.db"
INSTANCE_FILES = ("secret_key", "config.py")
CHUNK = 1024 * 1024
WORK_PREFIX = "backup-"  # the database's copy, in the instance's temporary folder: <WORK_PREFIX><file_tag>-<random>

Progress = Callable[[int, int], None]  # (done, total) files


class _Hashing:
    """A file object that hashes what tarfile reads from it."""

    def __init__(self, handle):
        self.handle, self.digest = handle, hashlib.sha256()

    def read(self, size=-1):
        data = self.handle.read(size)
        self.digest.update(data)
        return data


def _add(archive: tarfile.TarFile, name: str, path: Path, manifest: dict) -> None:
    with open(path, "rb") as handle:
        info = archive.gettarinfo(fileobj=handle, arcname=name)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        hashing = _Hashing(handle)
        archive.addfile(info, hashing)
    manifest["files"][name] = {"sha256": hashing.digest.hexdigest(), "size": info.size}


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o600
    archive.addfile(info, io.BytesIO(data))


def sweep_stopped_backups(settings: Settings, at_start: bool = True) -> None:
    """The database copies and pins of backups whose process stopped mid-way (a kill leaves them: TemporaryDirectory
    cleans up only what returns), at a serving start and before each backup. A partial archive it was writing stays
    beside its target (0600), until a backup to that target writes over it."""
    for work in Path(settings.temp_path).glob(WORK_PREFIX + "*"):
        if left_behind(work.name[len(WORK_PREFIX) :].split("-", 1)[0], work, at_start):
            shutil.rmtree(work, ignore_errors=True)
    sweep_pins(settings.uploads_path, at_start)


def create_backup(settings: Settings, archive_path: str, progress: Progress | None = None) -> dict:
    """Write the archive (whole or not at all: a partial file is removed); returns its manifest."""
    instance, uploads = Path(settings.instance_path), Path(settings.uploads_path)
    Path(settings.temp_path).mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(settings.temp_path, 0o700)  # whatever the umask (docs/api.md §11: folders 0700)
    target = Path(archive_path)
    partial = target.with_name(target.name + ".partial")
    sweep_stopped_backups(settings, at_start=False)  # a backup command killed beside a running service
    prefix = f"{WORK_PREFIX}{file_tag()}-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir=settings.temp_path) as work, ExitStack() as held:
        snapshot = Path(work) / "review.db"
        # Task deletion, the one remover of stored files, waits while the database is copied and the
        # files it names are linked: the archive holds each of them, whatever is deleted next.
        with removals_held(uploads / "review"):
            copy_database_to(str(snapshot))
            files = list(dict.fromkeys(stored_files(str(snapshot))))
            links = held.enter_context(pinned(uploads, files))
        manifest = {
            "format": FORMAT,
            "createdAt": now_iso(),
            "schemaVersion": schema_version(str(snapshot)),
            "counts": {"rows": row_counts(str(snapshot)), "files": 0},
            "files": {},
            "missingFiles": [],
        }
        try:
            # 0600 from its first byte: it holds password hashes, tokens and the secret key, even cut short
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(descriptor, 0o600)  # a partial file an earlier run left keeps its mode through O_CREAT
            written = os.fdopen(descriptor, "wb")
            with written, tarfile.open(fileobj=written, mode="w:gz") as archive:
                _add(archive, DATABASE, snapshot, manifest)
                for name in INSTANCE_FILES:
                    if (instance / name).is_file():
                        _add(archive, f"instance/{name}", instance / name, manifest)
                for done, name in enumerate(files, 1):
                    try:
                        _add(archive, f"uploads/{name}", links.get(name, uploads / name), manifest)
                        manifest["counts"]["files"] += 1
                    except FileNotFoundError:  # lost before the copy (or unlinkable and removed since)
                        manifest["missingFiles"].append(name)
                    if progress:
                        progress(done, len(files))
                _add_bytes(archive, MANIFEST, json.dumps(manifest, indent=2, sort_keys=True).encode())
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return manifest
