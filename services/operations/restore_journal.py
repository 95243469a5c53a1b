"""The journal of a restore (docs/operations.md "Backup and restore"; docs/api.md §16 "Restore, continued"):
killed at any point, a restore leaves the old instance or the new one, never a mix.

Every step can be done again (a rename done is skipped; the rows replace what the database holds), so the next
start or restore finishes a journal it finds; a failure inside the restore turns it "back" and undoes the renames.
`.restore/` folders without a journal are leftovers and are removed.
"""

import fcntl
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from models import init_database
from models.backup_copy import close_store, restore_rows_from
from services.operations.archive import SCOPES, fsync_folder, missing_top
from services.settings import Settings, SettingsError

WORK = ".restore"
JOURNAL = "journal.json"
FAULT = "REVIEW_RESTORE_FAULT"  # tests only: the step at which the process ends itself
FAULT_EXIT = 97
STATE_FILES = ("secret_key", "review.db", "review.db-wal", "review.db-shm", "review.db-writer")  # a start makes


class RestoreUnfinished(SettingsError):
    """A journal names a step this start cannot do (its rows need the DATABASE_URL database)."""


def checkpoint(step: str) -> None:
    """Where the tests kill a restore (REVIEW_RESTORE_FAULT=<step>): at once, no cleanup, as a kill would."""
    if os.environ.get(FAULT) == step:
        os._exit(FAULT_EXIT)


@dataclass
class Journal:
    work: list[str]  # the .restore folders: the instance's, then the uploads'
    moves: list[list]  # [label, current, staged or None (only moved aside), aside], in order
    rows: str | None = None  # the archive's database, whose rows go into the DATABASE_URL database
    phase: str = "forward"  # or "back"
    lock: int | None = None  # the flock on the instance's .restore folder (not written)

    def write(self) -> None:
        """Whole or not at all: a new file, fsynced, renamed over the old one, the folder fsynced."""
        folder = Path(self.work[0])
        temp = folder / (JOURNAL + ".new")
        with open(temp, "w") as handle:
            json.dump({key: value for key, value in asdict(self).items() if key != "lock"}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, folder / JOURNAL)
        fsync_folder(folder)

    def forward(self) -> None:
        for label, current, staged, aside in self.moves:
            current, aside = Path(current), Path(aside)
            if staged is None or Path(staged).exists():  # not moved in yet
                if os.path.lexists(current):
                    os.replace(current, aside)
                checkpoint(f"aside:{label}")
                if staged is not None:
                    os.replace(staged, current)
                    checkpoint(f"in:{label}")

    def back(self) -> None:
        for _label, current, staged, aside in reversed(self.moves):
            current, aside = Path(current), Path(aside)
            if staged is not None and not Path(staged).exists() and os.path.lexists(current):
                os.replace(current, staged)
            if os.path.lexists(aside):
                os.replace(aside, current)

    def end(self) -> None:
        """The journal goes, then the work folders (the old set, or the new one after an undo)."""
        for folder in {str(Path(current).parent) for _label, current, _staged, _aside in self.moves}:
            fsync_folder(Path(folder))  # the renames are on disk before the journal is gone
        (Path(self.work[0]) / JOURNAL).unlink(missing_ok=True)
        fsync_folder(Path(self.work[0]))
        checkpoint("ended")
        for folder in reversed(self.work):
            shutil.rmtree(folder, ignore_errors=True)
        self.release()

    def release(self) -> None:
        """The lock let go (the journal, if still there, is the next start's to finish)."""
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def lock(folder: Path) -> int:
    """An flock on `folder` (held until closed, or the process ends)."""
    fd = os.open(folder, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def resume(instance: Path) -> Journal | None:
    """At start, before config.py is read: a journal's renames finished (or undone); the journal, still
    locked, for finish(). Without a journal, the instance's .restore folder is a leftover and goes."""
    work = instance / WORK
    if not work.is_dir():
        return None
    fd = lock(work)  # waits for a restore or another process's recovery to end
    try:
        saved = json.loads((work / JOURNAL).read_text())
    except FileNotFoundError:
        shutil.rmtree(work, ignore_errors=True)
        os.close(fd)
        return None
    journal = Journal(**saved, lock=fd)
    try:
        journal.forward() if journal.phase == "forward" else journal.back()
    except BaseException:
        journal.release()
        raise
    return journal


def finish(journal: Journal | None, uploads: Path, database_url: str) -> None:
    """After resume(), once the settings are read: the journal's rows put in again, the journal ended.
    An uploads .restore folder without an instance one is a leftover and goes."""
    if journal is None:
        shutil.rmtree(uploads / WORK, ignore_errors=True)  # resume() found no restore running
        return
    if journal.phase == "forward" and journal.rows:
        if not database_url:
            journal.release()
            raise RestoreUnfinished(
                "a restore into the DATABASE_URL database was interrupted; start with the "
                "same DATABASE_URL to finish it"
            )
        init_database(database_url)
        try:
            restore_rows_from(journal.rows, replace=True)
        except BaseException:
            journal.release()
            raise
        finally:
            close_store()
    journal.end()


@dataclass
class Resumed:
    journal: Journal | None
    made: list[Path]  # what this start is about to make in the instance folder


def resume_restore(instance: Path) -> Resumed:
    """create_app's first step, before config.py is read: resume(), and what the start will make."""
    top = missing_top(instance)
    made = [top] if top else [instance / name for name in STATE_FILES if not (instance / name).exists()]
    return Resumed(resume(instance), made)


def finish_restore(resumed: Resumed, settings: Settings, one_off: bool) -> list[Path]:
    """create_app's step once the settings are read: finish(); for a one-off command (`flask --app app
    restore`) what its start made, which a refused restore removes again (docs/api.md §16)."""
    uploads = Path(settings.uploads_path)
    top = missing_top(uploads)
    made = resumed.made + ([top] if top else [uploads / scope for scope in SCOPES if not (uploads / scope).exists()])
    finish(resumed.journal, uploads, settings.database_url)
    return made if one_off else []


def remove_made(paths: list[Path]) -> None:
    """Remove what was made for a restore that was then refused (docs/api.md §16: it creates nothing)."""
    for path in reversed(paths):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
