"""Keeps the feedback keyword indexes current after the requests that add rows (models.feedback)."""
import threading

from models.feedback import INDEX_BATCH, index_pending
from services.background import Worker

POLL_SECONDS = 5.0  # also picks up rows queued while no indexer ran (a crash, another process)
SETTLE_SECONDS = 0.2  # after a wake-up, so one transaction indexes a burst of submissions

_wake = threading.Event()


def wake_indexer() -> None:
    _wake.set()


def drain() -> int:
    """Index every queued row, one short transaction per batch so writers interleave; returns how many."""
    total = 0
    while True:
        done = index_pending(INDEX_BATCH)
        total += done
        if done < INDEX_BATCH:
            return total


def indexer() -> Worker:
    return Worker("feedback-indexer", drain, _wake, POLL_SECONDS, SETTLE_SECONDS)
