"""Background workers of the one service process (webhook sender, search indexer, checkpointer, going live,
statistics)."""
import logging
import threading
from collections import Counter

from models import db
from models.base import register_background
from models.writes import checkpoint_wal

log = logging.getLogger(__name__)
PASSES: Counter[str] = Counter()  # passes each worker of this process has made (/metrics: review_worker_passes)


class Worker(threading.Thread):
    """Runs `step()` on its own database connection: at once when `wakeup` is set, else every
    `poll_seconds`. `settle_seconds` after a wake-up lets a batch gather before the next pass.
    It ends when stopped, which happens too before the process binds `db` to another database."""

    def __init__(self, name, step, wakeup, poll_seconds, settle_seconds=0.0):
        super().__init__(name=name, daemon=True)
        self.step, self.wakeup = step, wakeup
        self.poll_seconds, self.settle_seconds = poll_seconds, settle_seconds
        self.stopping = threading.Event()

    def start(self) -> None:
        register_background(lambda: self.stop(timeout=60))  # steps are bounded by their own timeouts
        super().start()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                with db.connection_context():
                    self.step()
            except Exception:  # a worker must survive anything and try again
                log.exception("%s pass failed", self.name)
            PASSES[self.name] += 1
            woken = self.wakeup.wait(self.poll_seconds)
            self.wakeup.clear()
            if woken and self.settle_seconds:
                self.stopping.wait(self.settle_seconds)

    def stop(self, timeout: float = 5) -> None:
        self.stopping.set()
        self.wakeup.set()
        self.join(timeout=timeout)


CHECKPOINT_POLL_SECONDS = 0.5


def checkpointer() -> Worker:
    """Keeps the WAL short from outside the requests (models.writes.checkpoint_wal)."""
    return Worker("wal-checkpointer", checkpoint_wal, threading.Event(), CHECKPOINT_POLL_SECONDS)
