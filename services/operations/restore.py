"""Restore an archive of services.operations.backup: check everything, then swap (docs/operations.md "Backup and
restore"; docs/api.md §11, §16).

The archive is checked (services.operations.archive), unpacked into `.restore/` folders on the same disks (so the
swap is renames), then the journal (services.operations.restore_journal) takes the swap over. The restore holds the
instance (services.operations.service_lock) meanwhile, so no service starts before it is done.
"""

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeGuard

import peewee

from models.backup_copy import bound_row_counts, restore_rows_from, row_counts, schema_version
from models.row_copy import TargetNotEmpty
from models.schema import LATEST
from services.operations import restore_journal
from services.operations.archive import (
    INSTANCE_FILES,
    SCOPES,
    RestoreRefused,
    Survey,
    fsync_tree,
    missing_top,
    private_folder,
    survey,
    unpack,
)
from services.operations.backup import DATABASE, FORMAT, Progress
from services.operations.restore_journal import Journal, checkpoint, remove_made
from services.operations.service_lock import ServiceRunning, alone
from services.settings import Settings

__all__ = ["RestoreRefused", "Restored", "remove_made", "restore_backup", "target_in_use"]
SIDE_FILES = ("review.db-wal", "review.db-shm")
KEY_FILE = "instance/secret_key"


@dataclass
class Restored:
    manifest: dict
    config_left_out: bool  # the archive holds config.py and it was not asked for


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: object) -> str:
    return "missing" if value is None else repr(value)


def _newer(version: int) -> RestoreRefused:
    return RestoreRefused(
        f"the archive is of schema version {version}, newer than this release knows (up to "
        f"{LATEST}): restore it with the release that made it, or a newer one"
    )


def _check_manifest(manifest: object) -> dict:
    """The manifest's shape, each flaw named."""
    if manifest is None:
        raise RestoreRefused(
            "the archive holds no manifest.json (the last member of every backup): it is "
            "incomplete, or was not made by `backup`"
        )
    if not isinstance(manifest, dict):
        raise RestoreRefused("manifest.json is damaged: it is not a JSON object")
    if manifest.get("format") != FORMAT:
        raise RestoreRefused(f"manifest.json names format {manifest.get('format')!r}, not {FORMAT!r}")
    version, files, counts = manifest.get("schemaVersion"), manifest.get("files"), manifest.get("counts")
    if not _count(version):
        raise RestoreRefused(f"manifest.json is damaged: schemaVersion is {_shown(version)}, not a version number")
    if version > LATEST:
        raise _newer(version)
    if not isinstance(files, dict):
        raise RestoreRefused(f"manifest.json is damaged: its list of files is {_shown(files)}")
    for name, entry in files.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and _count(entry.get("size"))):
            raise RestoreRefused(f"manifest.json is damaged: the entry of {name} lacks its SHA-256 or size")
    if not isinstance(counts, dict):
        raise RestoreRefused(f"manifest.json is damaged: its counts are {_shown(counts)}")
    if not _count(counts.get("files")):
        raise RestoreRefused(f"manifest.json is damaged: counts.files is {_shown(counts.get('files'))}, not a count")
    rows = counts.get("rows")
    if not isinstance(rows, dict) or not all(_count(number) for number in rows.values()):
        raise RestoreRefused("manifest.json is damaged: counts.rows is not a count of rows per table")
    return manifest


def _compare(found: Survey, manifest: dict) -> None:
    """The archive's members against the manifest, before anything is written."""
    listed = manifest["files"]
    for name in sorted(set(listed) | set(found.sizes)):
        if name not in found.sizes:
            raise RestoreRefused(f"{name} is listed in the manifest but missing from the archive")
        if name not in listed:
            raise RestoreRefused(f"{name} is in the archive but not in the manifest")
        if found.sizes[name] != listed[name]["size"]:
            raise RestoreRefused(
                f"{name} holds {found.sizes[name]} bytes, the manifest says "
                f"{listed[name]['size']}: the archive is damaged"
            )
    for name in (DATABASE, KEY_FILE):
        if name not in found.sizes:
            raise RestoreRefused(f"the archive holds no {name}")
    uploads = sum(1 for name in found.sizes if name.startswith("uploads/"))
    if manifest["counts"]["files"] != uploads:
        raise RestoreRefused(f"the manifest counts {manifest['counts']['files']} files, the archive holds {uploads}")


def _check_database(path: Path, manifest: dict) -> None:
    try:
        version, rows = schema_version(str(path)), row_counts(str(path))
    except sqlite3.DatabaseError:
        raise RestoreRefused(f"{DATABASE} in the archive is not an SQLite database") from None
    if version is not None and version > LATEST:
        raise _newer(version)
    for table, expected in manifest["counts"]["rows"].items():
        if rows.get(table, 0) != expected:
            raise RestoreRefused(f"table {table} holds {rows.get(table, 0)} rows, the manifest says {expected}")


def target_in_use(settings: Settings) -> str | None:
    """What the target already holds (tasks, feedback, files), or None when it is empty."""
    database = Path(settings.instance_path) / "review.db"
    if settings.database_url or database.is_file():
        rows = bound_row_counts() if settings.database_url else row_counts(str(database))
        held = {
            name: rows.get(table, 0)
            for name, table in (("tasks", "review_task"), ("feedback records", "feedback"), ("assets", "asset"))
        }
        if any(held.values()):
            return ", ".join(f"{count} {name}" for name, count in held.items() if count)
    for scope in SCOPES:
        folder = Path(settings.uploads_path) / scope
        if folder.is_dir() and any(path.is_file() for path in folder.rglob("*")):
            return f"files in {folder}"
    return None


def _moves(current: dict[str, Path], new: dict[str, Path], old: dict[str, Path], rows: bool) -> list[list]:
    """[label, current, staged (None: only moved aside), aside]: an old database's WAL first."""

    def move(folder: str, name: str, staged: bool = True) -> list:
        return [
            f"{folder}/{name}",
            str(current[folder] / name),
            str(new[folder] / name) if staged else None,
            str(old[folder] / name),
        ]

    aside = [] if rows else [move("instance", name, staged=False) for name in SIDE_FILES]
    kept = [name for name in INSTANCE_FILES if (new["instance"] / name).exists() and not (rows and name == "review.db")]
    return aside + [move("instance", name) for name in kept] + [move("uploads", scope) for scope in SCOPES]


def _stage(
    settings: Settings, handle: IO[bytes], manifest: dict, config: bool, progress: Progress | None, journal: Journal
) -> None:
    """The new set unpacked, checked and on disk in the journal's .restore folders; its moves listed."""
    instance, uploads = Path(settings.instance_path), Path(settings.uploads_path)
    work = {"instance": Path(journal.work[0]), "uploads": Path(journal.work[1])}
    new = {key: folder / "new" for key, folder in work.items()}
    old = {key: folder / "old" for key, folder in work.items()}
    for folder in (work["uploads"], *new.values(), *old.values()):
        private_folder(folder)

    def destination(parts: tuple[str, ...]) -> Path | None:
        if parts[0] == "instance" and parts[1] == "config.py" and not config:
            return None  # checked, not written
        return new[parts[0]].joinpath(*parts[1:])

    if unpack(handle, manifest["files"], destination, progress) != set(manifest["files"]):
        raise RestoreRefused("the archive changed while it was read: members it listed are gone")
    checkpoint("unpacked")
    _check_database(new["instance"] / "review.db", manifest)
    for scope in SCOPES:
        private_folder(new["uploads"] / scope)
    for folder in work.values():
        fsync_tree(folder)
    journal.moves = _moves({"instance": instance, "uploads": uploads}, new, old, bool(settings.database_url))
    journal.rows = str(new["instance"] / "review.db") if settings.database_url else None
    checkpoint("staged")


def _swap(journal: Journal, replace: bool) -> None:
    """The journal's moves, then its rows; a failure undoes the moves (the rows' transaction rolls back)."""
    try:
        journal.forward()
        if journal.rows:
            restore_rows_from(journal.rows, replace=replace)
            checkpoint("rows")
    except (OSError, peewee.DatabaseError, TargetNotEmpty) as exc:
        journal.phase = "back"
        try:
            journal.write()
        except OSError:
            pass  # the undo goes on; killed now, the next start would finish it forward (whole either way)
        journal.back()
        journal.end()
        raise RestoreRefused(
            f"the restore could not be completed ({getattr(exc, 'strerror', None) or exc}); "
            "the target was put back as it was"
        ) from None
    except BaseException:
        journal.release()  # interrupted: the journal stays, the next start or restore finishes it
        raise
    checkpoint("swapped")
    journal.end()


def restore_backup(
    settings: Settings, archive_path: str, force: bool = False, progress: Progress | None = None, config: bool = False
) -> Restored:
    """Restore into the configured instance and uploads folders (config.py only when `config`).

    RestoreRefused (nothing changed, nothing made) while a service process holds the instance (named;
    docs/api.md §11), when the archive fails a check, or when the target holds tasks, feedback or files
    and `force` is not given. Close the database before calling.
    """
    try:
        with alone(settings):  # no service starts while it runs
            return _restore(settings, archive_path, force, progress, config)
    except ServiceRunning as exc:
        raise RestoreRefused(str(exc)) from None


def _restore(settings: Settings, archive_path: str, force: bool, progress: Progress | None, config: bool) -> Restored:
    instance, uploads = Path(settings.instance_path), Path(settings.uploads_path)
    restore_journal.finish(restore_journal.resume(instance), uploads, settings.database_url)  # a killed one first
    if not force and (held := target_in_use(settings)):
        raise RestoreRefused(f"the target already holds {held}; restore into an empty instance or use --force")
    try:
        handle = open(archive_path, "rb")  # read twice, closed below
    except FileNotFoundError:
        raise RestoreRefused(f"no archive at {archive_path}") from None
    except OSError as exc:
        raise RestoreRefused(f"the archive {archive_path} cannot be read ({exc.strerror})") from None
    with handle:
        found = survey(handle)  # nothing is written before the archive has passed this
        manifest = _check_manifest(found.manifest)
        _compare(found, manifest)
        made = [top for top in (missing_top(instance), missing_top(uploads)) if top]
        work = [instance / restore_journal.WORK, uploads / restore_journal.WORK]
        private_folder(instance)
        try:
            work[0].mkdir(mode=0o700)
        except FileExistsError:
            raise RestoreRefused(f"another restore is under way ({work[0]} exists)") from None
        journal = Journal(work=[str(folder) for folder in work], moves=[], lock=restore_journal.lock(work[0]))
        try:
            _stage(settings, handle, manifest, config, progress, journal)
            journal.write()
        except BaseException:
            journal.release()
            for folder in reversed(work):
                shutil.rmtree(folder, ignore_errors=True)
            remove_made(made)
            raise
    checkpoint("journal")
    _swap(journal, replace=force)
    return Restored(manifest, "instance/config.py" in manifest["files"] and not config)
