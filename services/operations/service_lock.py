"""Who serves an instance (docs/api.md §11; docs/operations.md "Backup and restore" says how the locks work): a
restore or copy-to never races a running service. The locks end with the process however it ends (a kill too):
nothing stale is ever mistaken for a live service.
"""

import atexit
import fcntl
import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.store import hold_service_lock, release_service_lock, take_service_lock_alone
from services.operations.archive import missing_top
from services.settings import Settings

FOLDER = "serving"


class ServiceRunning(Exception):
    """Serving processes hold the instance; the message names them and says to stop them."""

    def __init__(self, holders: list[str]):
        self.holders = holders
        named = "; ".join(holders) or "a process that is starting"
        super().__init__(
            f"the service is running on this instance ({named}): stop it first, then run this "
            "again (nothing was changed)"
        )


def _me() -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}"


def _lock_folder(folder: Path, how: int) -> int:
    """`folder` (made if missing) opened and flocked; again if a restore removed it meanwhile."""
    while True:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, how)
            if os.stat(folder).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _files(folder: Path) -> Iterator[tuple[Path, int]]:
    """Each process file of `folder` (its name `<pid>@<host>`) with a descriptor, closed after."""
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or "@" not in path.name:
            continue  # one being made
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            yield path, fd
        finally:
            os.close(fd)


def _free(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holders(folder: Path) -> list[str]:
    """The live processes whose files are in `folder`."""
    named = []
    for path, fd in _files(folder):
        if not _free(fd):
            pid, _, host = path.name.partition("@")
            named.append(f"pid {pid} on {host}")
    return named


@dataclass
class Held:
    folder: int
    own: int
    path: Path
    session: Any = None  # the PostgreSQL session holding its share

    def share_database(self, database_url: str) -> "Held":
        """On PostgreSQL, the database's lock too (waits while a restore holds it)."""
        self.session = hold_service_lock(database_url, _me())
        return self

    def release(self) -> None:
        """At exit: this process's file goes (its locks, the session's too, end with the process)."""
        if self.own < 0:
            return
        self.path.unlink(missing_ok=True)
        os.close(self.own)
        os.close(self.folder)
        self.own = -1


def hold(instance: Path) -> Held:
    """A serving process's hold on the instance folder, for its life (waits while a restore runs)."""
    folder = instance / FOLDER
    folder_fd = _lock_folder(folder, fcntl.LOCK_SH)
    for path, fd in _files(folder):  # files of processes gone (killed): removed, as nothing holds them
        with suppress(FileNotFoundError):
            if _free(fd) and os.stat(path).st_ino == os.fstat(fd).st_ino:
                path.unlink()
    # Made under another name, locked, then renamed: a file under its final name is always held.
    own, temp = tempfile.mkstemp(prefix=".", dir=folder)
    fcntl.flock(own, fcntl.LOCK_EX)
    os.write(own, (_me() + "\n").encode())
    path = folder / f"{os.getpid()}@{socket.gethostname()}"
    os.replace(temp, path)
    held = Held(folder_fd, own, path)
    atexit.register(held.release)
    return held


@contextmanager
def alone(settings: Settings, other_database: str = "") -> Iterator[None]:
    """While nothing serves the instance (nor the database `other_database`): held exclusively, so no
    service starts meanwhile. ServiceRunning, naming the holders, when processes serve it."""
    folder = Path(settings.instance_path) / FOLDER
    made = missing_top(folder)
    try:
        fd = _lock_folder(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ServiceRunning(_holders(folder)) from None
    sessions = []
    try:
        for url in dict.fromkeys((settings.database_url, other_database)):
            session, holders = take_service_lock_alone(url, _me())
            if holders:
                raise ServiceRunning(holders)
            sessions.append(session)
        yield
    finally:
        for session in sessions:
            release_service_lock(session)
        if made:  # made for this lock only: a refused restore creates nothing
            _remove_empty(folder, made)
        os.close(fd)


def _remove_empty(folder: Path, top: Path) -> None:
    """`folder`, then its parents up to `top`, each while it is empty (a restored instance is not)."""
    while True:
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == top:
            return
        folder = folder.parent
