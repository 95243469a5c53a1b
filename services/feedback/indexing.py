"""Keeps the feedback keyword indexes current after the requests that add rows (models.feedback)."""

import math
import time

from models.feedback import INDEX_BATCH, index_pending
from services.background import Job, job

INDEXER = "feedback-indexer"


def drain(until: float = math.inf) -> int:
    """Index the queued rows, one short transaction per batch so writers interleave, until none is left or
    `until` (time.monotonic()) passes; returns how many."""
    total = 0
    while True:
        done = index_pending(INDEX_BATCH)
        total += done
        if done < INDEX_BATCH or time.monotonic() >= until:
            return total


def indexer() -> Job:
    return job(INDEXER, drain)  # its looks also find rows queued while no indexer ran
