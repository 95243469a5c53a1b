"""Restore an archive of services.operations.backup (CONTRACT §11): check everything, then swap.

Every member is unpacked into staging folders inside the instance and uploads folders (same disks,
so the swap is renames) and checked against the manifest: SHA-256 and size of each file, rows per
table of the database, the file count. Only then are the current files moved aside, the staged ones
moved in, and the old ones removed; a failure during the swap moves everything back. With
DATABASE_URL naming PostgreSQL, the archive's rows go into that database first, in one transaction
(replacing what it holds with --force). The service must be stopped while it runs.
"""
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from models.snapshot import bound_row_counts, restore_rows_from, row_counts
from services.operations.backup import DATABASE, FORMAT, MANIFEST, Progress
from services.settings import Settings

SCOPES = ("review", "library", "feedback")
PRIVATE_FILES = ("review.db", "secret_key", "config.py")
SIDE_FILES = ("review.db-wal", "review.db-shm")


class RestoreRefused(Exception):
    """The archive or the target is not fit; nothing was changed. str() names the problem."""


def _member_path(member: tarfile.TarInfo) -> PurePosixPath:
    path = PurePosixPath(member.name)
    top = path.parts[0] if path.parts else ""
    if path.is_absolute() or ".." in path.parts or not member.isfile() \
            or (top not in ("instance", "uploads") and member.name != MANIFEST):
        raise RestoreRefused(f"the archive holds {member.name!r}, which no backup of this service holds")
    return path


def _unpack(archive_path: str, staging: dict[str, Path], progress: Progress | None) -> tuple[dict, dict]:
    """Unpack into the staging folders; (manifest, {member name: (sha256, size)})."""
    seen: dict[str, tuple[str, int]] = {}
    manifest = None
    try:
        with tarfile.open(archive_path, "r:gz") as archive:
            for member in archive:
                path = _member_path(member)
                source = archive.extractfile(member)
                assert source is not None  # a regular file (checked above)
                if member.name == MANIFEST:
                    manifest = json.loads(source.read())
                    continue
                target = staging[path.parts[0]].joinpath(*path.parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                digest = hashlib.sha256()
                with open(target, "xb") as out:
                    while chunk := source.read(1024 * 1024):
                        digest.update(chunk)
                        out.write(chunk)
                seen[member.name] = (digest.hexdigest(), member.size)
                if progress:
                    progress(len(seen), 0)
    except FileNotFoundError:
        raise RestoreRefused(f"no archive at {archive_path}") from None
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise RestoreRefused(f"the archive is truncated or damaged ({type(exc).__name__}: {exc})") from None
    except (ValueError, UnicodeDecodeError):
        raise RestoreRefused("manifest.json is not valid JSON") from None
    if not isinstance(manifest, dict):
        raise RestoreRefused("the archive has no manifest.json: it is not a backup of this service")
    return manifest, seen


def _check(manifest: dict, seen: dict, staging: dict[str, Path]) -> None:
    if manifest.get("format") != FORMAT:
        raise RestoreRefused(f"manifest.json names format {manifest.get('format')!r}, not {FORMAT!r}")
    listed = manifest.get("files") or {}
    for name in sorted(set(listed) | set(seen)):
        if name not in seen:
            raise RestoreRefused(f"{name} is listed in the manifest but missing from the archive")
        if name not in listed:
            raise RestoreRefused(f"{name} is in the archive but not in the manifest")
        if listed[name].get("sha256") != seen[name][0] or listed[name].get("size") != seen[name][1]:
            raise RestoreRefused(f"{name} does not match its SHA-256 in the manifest: the archive is damaged")
    if DATABASE not in seen:
        raise RestoreRefused(f"the archive holds no {DATABASE}")
    counts = manifest.get("counts") or {}
    uploads = sum(1 for name in seen if name.startswith("uploads/"))
    if counts.get("files") != uploads:
        raise RestoreRefused(f"the manifest counts {counts.get('files')} files, the archive holds {uploads}")
    rows = row_counts(str(staging["instance"] / "review.db"))
    for table, expected in (counts.get("rows") or {}).items():
        if rows.get(table, 0) != expected:
            raise RestoreRefused(f"table {table} holds {rows.get(table, 0)} rows, the manifest says {expected}")


def target_in_use(settings: Settings) -> str | None:
    """What the target already holds (tasks, feedback, files), or None when it is empty."""
    database = Path(settings.instance_path) / "review.db"
    if settings.database_url or database.is_file():
        rows = bound_row_counts() if settings.database_url else row_counts(str(database))
        held = {name: rows.get(table, 0) for name, table in
                (("tasks", "review_task"), ("feedback records", "feedback"), ("assets", "asset"))}
        if any(held.values()):
            return ", ".join(f"{count} {name}" for name, count in held.items() if count)
    for scope in SCOPES:
        folder = Path(settings.uploads_path) / scope
        if folder.is_dir() and any(path.is_file() for path in folder.rglob("*")):
            return f"files in {folder}"
    return None


def _swap(moves: list[tuple[Path, Path, Path]]) -> None:
    """Each (current, staged, aside): current -> aside, staged -> current; undone on failure."""
    done: list[tuple[Path, Path, Path]] = []
    try:
        for current, staged, aside in moves:
            if current.exists():
                os.replace(current, aside)
            done.append((current, staged, aside))
            if staged.exists():
                os.replace(staged, current)
    except OSError:
        for current, staged, aside in reversed(done):
            if current.exists() and not staged.exists():
                os.replace(current, staged)
            if aside.exists():
                os.replace(aside, current)
        raise


def restore_backup(settings: Settings, archive_path: str, force: bool = False,
                   progress: Progress | None = None) -> dict:
    """Restore into the configured instance and uploads folders; returns the manifest.

    RestoreRefused (nothing changed) when the archive fails a check, or when the target holds
    tasks, feedback or files and `force` is not given. Close the database before calling.
    """
    instance, uploads = Path(settings.instance_path), Path(settings.uploads_path)
    if not force and (held := target_in_use(settings)):
        raise RestoreRefused(f"the target already holds {held}; restore into an empty instance or use --force")
    instance.mkdir(parents=True, exist_ok=True)
    uploads.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".restore-", dir=instance) as work_instance, \
            tempfile.TemporaryDirectory(prefix=".restore-", dir=uploads) as work_uploads:
        staging = {"instance": Path(work_instance) / "new", "uploads": Path(work_uploads) / "new"}
        aside = {"instance": Path(work_instance) / "old", "uploads": Path(work_uploads) / "old"}
        for folder in (*staging.values(), *aside.values()):
            folder.mkdir(mode=0o700)
        manifest, seen = _unpack(archive_path, staging, progress)
        _check(manifest, seen, staging)
        for name in PRIVATE_FILES:
            if (staging["instance"] / name).exists():
                os.chmod(staging["instance"] / name, 0o600)
        if settings.database_url:
            # The rows go into that database, in one transaction, before any file moves; the
            # archive's SQLite file is only their carrier.
            restore_rows_from(str(staging["instance"] / "review.db"), replace=force)
            (staging["instance"] / "review.db").unlink()
        side_files = () if settings.database_url else SIDE_FILES
        moves = [(instance / name, staging["instance"] / name, aside["instance"] / name)
                 for name in (*PRIVATE_FILES, *side_files) if (staging["instance"] / name).exists()
                 or name in side_files]
        for scope in SCOPES:
            (staging["uploads"] / scope).mkdir(exist_ok=True)
            moves.append((uploads / scope, staging["uploads"] / scope, aside["uploads"] / scope))
        try:
            _swap(moves)
        except OSError as exc:
            raise RestoreRefused(f"the restored files could not be moved in ({exc.strerror or exc}); "
                                 "the target was put back as it was") from None
        shutil.rmtree(aside["instance"], ignore_errors=True)
        shutil.rmtree(aside["uploads"], ignore_errors=True)
    return manifest
