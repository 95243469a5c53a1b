"""Files that belong to database records: written atomically, and never left orphaned (docs/decisions.md
"Files"). Removal mirrors placement: the file is set aside under a tombstone name in the transaction that
deletes its record and removed after the commit. A removal holds its folder's removal lock throughout, so a
backup that holds it while it copies the database and links the files that copy names (pinned()) keeps them.
"""

import contextlib
import fcntl
import logging
import os
import re
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from models.files import PendingFile
from models.writes import immediate
from rules.ids import iso, now_iso, utcnow
from services.owners import file_tag, gone, pid_stopped, tag_gone, this_process

log = logging.getLogger(__name__)
TEMP_PREFIX = ".upload-"
TOMBSTONE = ".deleting-"  # stored names never start with a dot, so none collides with one
PINS = ".backup-"  # a backup's links to the files it copies, in the uploads folder: <PINS><file_tag>-<random>
# A temporary folder or a file being placed older than this is left over, whoever left it (a process on another
# host cannot be asked whether it runs): a package, a placement or a backup's copy takes far less.
LEFT_BEHIND_SECONDS = 6 * 3600


def remove_quietly(path: str | os.PathLike) -> None:
    try:
        Path(path).unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s: %s", path, type(exc).__name__)


def _fsync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not every file system can sync a directory
    finally:
        os.close(fd)


def write_atomically(folder: str | os.PathLike, name: str, data: bytes) -> Path:
    """Temporary file in the same folder, fsync, rename into place, fsync the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{name}.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, folder / name)
    except BaseException:
        remove_quietly(temp)
        raise
    _fsync_folder(folder)
    return folder / name


class Placement:
    def __init__(self, path, entry_id):
        self.path, self._entry_id = path, entry_id

    def settle(self) -> None:
        """Call inside the transaction that inserts the file's record. An entry already gone was swept, its file
        with it (its process was taken for stopped): OSError, so the record is not written either."""
        if not PendingFile.delete().where(PendingFile.id == self._entry_id).execute():
            raise OSError(f"{self.path} was swept before its record was written")


@contextmanager
def placed_file(
    uploads_root: str | os.PathLike, folder: str | os.PathLike, name: str, data: bytes
) -> Iterator["Placement"]:
    """Write `data` to folder/name for a record inserted (with placement.settle()) in the block; any exception
    in the block removes the file and its journal entry again."""
    relative = str((Path(folder) / name).resolve().relative_to(Path(uploads_root).resolve()))
    with immediate():  # queue behind this process's writers, not in SQLite's busy handler
        entry = PendingFile.create(path=relative, pid=os.getpid(), owner=this_process(), created_at=now_iso())
    try:
        yield Placement(write_atomically(folder, name, data), entry.id)
    except BaseException:
        remove_quietly(Path(folder) / name)
        with immediate():
            PendingFile.delete().where(PendingFile.id == entry.id).execute()
        raise


def left_behind(tag: str, path: Path, at_start: bool = False) -> bool:
    """Whether `path`, a temporary folder named with its process's file_tag(), was left by a process that has
    stopped. Of this host, its process is asked (at a start, this process's own tag is a predecessor's with the
    same pid); of another host, or a name without a tag, it is once older than LEFT_BEHIND_SECONDS."""
    if tag.partition(".")[2] == file_tag().partition(".")[2]:
        return tag_gone(tag) or (at_start and tag == file_tag())
    try:
        return time.time() - path.stat().st_mtime > LEFT_BEHIND_SECONDS
    except OSError:
        return False


def _stopped(entry: PendingFile) -> bool:
    if entry.created_at < iso(utcnow() - timedelta(seconds=LEFT_BEHIND_SECONDS)):
        return True  # no placement takes that long, wherever it ran
    if entry.owner is not None:
        return gone(entry.owner, entry.created_at)  # another host's: False, its age decides
    return entry.pid == os.getpid() or pid_stopped(entry.pid)  # a row from before owners were kept: its pid


def sweep_pending(uploads_root: str | os.PathLike) -> int:
    """At start: remove the files that a stopped process placed but never recorded. Returns the count."""
    root = Path(uploads_root).resolve()
    removed = 0
    for entry in list(PendingFile.select()):
        if not _stopped(entry):
            continue
        path = (root / entry.path).resolve()
        if path.is_relative_to(root) and path != root:
            for temp in path.parent.glob(f"{TEMP_PREFIX}{path.name}.*"):
                remove_quietly(temp)
            if path.is_file():
                remove_quietly(path)
                removed += 1
                log.warning("removed %s: its record was never written (the process stopped in between)", entry.path)
            if len(Path(entry.path).parts) > 2:  # a record's own folder (feedback/<id>/), emptied by this
                with contextlib.suppress(OSError):
                    path.parent.rmdir()
        PendingFile.delete().where(PendingFile.id == entry.id).execute()
    return removed


@contextmanager
def removals_held(folder: str | os.PathLike) -> Iterator[None]:
    """No file of `folder` is removed while this is held, by any process (an flock of a file beside
    the folder, so the folder itself holds only stored files). Removals wait, they do not fail."""
    real = Path(os.path.realpath(folder))
    handle = os.open(real.parent / f".{real.name}.removals", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


@contextmanager
def removed_file(path: str | os.PathLike) -> Iterator[Callable[[], bool]]:
    """For a record deleted in the block's transaction: the yielded set_aside(), called inside that
    transaction, moves the file at `path` aside (False when it is already missing). Once the block
    has committed the file is removed; if the block fails it is put back. Its folder's removal lock
    is held throughout: take it before the write lock, never inside it."""
    path = Path(path)
    tombstone, moved = path.with_name(TOMBSTONE + path.name), []

    def set_aside():
        if os.path.lexists(path):
            os.rename(path, tombstone)
            moved.append(tombstone)
        return bool(moved)

    with removals_held(path.parent):
        try:
            yield set_aside
        except BaseException:
            if moved:
                os.rename(tombstone, path)
            raise
        if moved:
            remove_quietly(tombstone)


@contextmanager
def pinned(root: str | os.PathLike, names: list[str]) -> Iterator[dict[str, Path]]:
    """{name: a hard link to root/name} in a hidden folder of `root`, removed afterwards: the files
    stay readable there however they are removed meanwhile (a backup reads them after the database
    copy that names them). A name that is missing or cannot be linked (another file system) is left out."""
    root = Path(root)
    folder = Path(tempfile.mkdtemp(prefix=f"{PINS}{file_tag()}-", dir=root))
    try:
        links = {}
        for number, name in enumerate(names):
            with contextlib.suppress(OSError):
                os.link(root / name, folder / str(number), follow_symlinks=False)
                links[name] = folder / str(number)
        yield links
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep_pins(root: str | os.PathLike, at_start: bool = False) -> None:
    """The pins of a backup that stopped before removing them (they hold deleted files' space)."""
    for stale in Path(root).glob(PINS + "*"):
        if left_behind(stale.name[len(PINS) :].split("-")[0], stale, at_start):
            shutil.rmtree(stale, ignore_errors=True)


def settle_removals(folder: str | os.PathLike, recorded: Any) -> int:
    """At start: each file set aside in `folder` goes back when `recorded(name)` (its record's deletion
    never committed), else it is removed. Returns how many were settled. Under the folder's removal lock: a
    deletion another process has under way holds it until it has committed and removed its file, so its
    tombstone is never taken for one a stop left."""
    settled = 0
    if not any(Path(folder).glob(TOMBSTONE + "*")):  # a tombstone made after this is a deletion's under way
        return 0
    with removals_held(folder):
        for tombstone in Path(folder).glob(TOMBSTONE + "*"):
            name = tombstone.name[len(TOMBSTONE) :]
            if recorded(name):
                os.replace(tombstone, tombstone.with_name(name))
                log.warning("restored %s: its deletion never committed", name)
            else:
                remove_quietly(tombstone)
            settled += 1
    return settled


def clean_file_name(name: str | None, fallback: str) -> str:
    """The client's file name for display: last path part, no control characters, <= 255 chars."""
    name = unicodedata.normalize("NFC", str(name or ""))
    name = re.split(r"[\\/]", name)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return name[:255] or fallback


def inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """True when `path`, with every symlink resolved, lies inside the directory `root`."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, base]) == base and real != base


def real_file_inside(folder: str | os.PathLike, name: str) -> Path | None:
    """The real path of `folder`/`name` when it is a regular file whose real path (every symlink
    resolved) lies inside `folder`, else None: a link out of an upload folder is never served."""
    path = Path(folder) / name
    if not inside(path, folder) or not os.path.isfile(os.path.realpath(path)):
        return None
    return Path(os.path.realpath(path))
