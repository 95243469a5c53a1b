"""Waiting for something to happen — a thread, a process, a row, a file — as a condition polled within a
deadline, never as a sleep for a guessed while: it goes on as soon as the condition holds."""

import time


def wait_until(condition, seconds=10, what="the condition", every=0.05):
    """condition()'s first true value, asked every `every` s; fails after `seconds` naming `what` (or, when
    `what` is callable, with what it returns: the state reached)."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() >= deadline:
            raise AssertionError(what() if callable(what) else f"{what} (not within {seconds} s)")
        time.sleep(every)
    return value


def wait_for(read, done, seconds=10, what="the state", every=0.05):
    """read()'s first value that done(value) accepts; fails after `seconds` showing the last value read."""
    last = []

    def reached():
        last[:] = [read()]
        return done(last[0])

    wait_until(reached, seconds, lambda: f"{what} after {seconds} s: {last[0]!r:.3000}", every)
    return last[0]
