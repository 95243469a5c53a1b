"""Work in the background (docs/conventions.md "Background work"): a scheduler per process runs each job's
pass on its own thread when due (at once after `wake(name)`), and `claim()` is how a pass takes a due row for a while.
"""

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from models import db, immediate
from models.base import register_background
from models.writes import after_write
from rules.vocabulary import COMMENTS_PAGE, EDITION_MAX_ARTICLES, STATS_PLATFORM_DAYS, comment_pages

log = logging.getLogger(__name__)
PASSES: Counter[str] = Counter()  # passes each job of this process has made (/metrics: review_worker_passes)
_SCHEDULERS: list["Scheduler"] = []  # this process's (the tests build several apps in one process)


HOURLY = 3600.0  # seconds between polls once a kind's own delays are spent
# Beyond a row's own platform calls, the most its work can add: the first token, and a token refused once
# (renewed as usual, then by force, and the call made again: services/platform/client.py).
TOKEN_CALLS = 4
MARGIN = timedelta(seconds=60)  # a lease outlives the slowest work it covers by this much


@dataclass(frozen=True)
class Calls:
    """The most platform calls one taken row's work makes, from the settings; and that in words, for the
    docs' table. A lease covers them all, each at its whole deadline, so no second process takes a row
    whose work still runs."""

    count: Callable[[Any], int]
    words: str


@dataclass(frozen=True)
class Policy:
    """How one kind of work is switched, looked for, held and given up (docs/conventions.md "Background work",
    which prints POLICY)."""

    switch: str  # the setting that runs it in a process
    every: float  # seconds between looks when nothing wakes it
    lease: timedelta | None  # a taken row is the pass's this long, past every call's deadline; None: none held
    attempts: int | None  # failed attempts before a row is given up; None: as `retry` says
    retry: str  # when a failure is tried again, in words
    settle: float = 0.0  # seconds after a wake-up, so a burst goes out in one pass
    calls: Calls | None = None  # platform calls a taken row makes: the lease is longer when they could take longer


_DELAYS = "after each of `REVIEW_WEBHOOK_RETRY_DELAYS`"
POLICY = {
    "webhook-sender": Policy("WEBHOOK_SENDER_ENABLED", 1.0, timedelta(seconds=60), None, _DELAYS + ", then given up"),
    "team": Policy("TEAM_MESSAGES_ENABLED", 1.0, timedelta(seconds=60), None, _DELAYS + ", then given up", settle=0.3),
    # A card's send: a token and the call, each once more when the token is refused (services/chat/clients.py),
    # each within services.outbound's attempt.
    "chat-cards": Policy("CHAT_CARDS_ENABLED", 2.0, timedelta(minutes=3), 8, _DELAYS + " (the last repeated)"),
    "live-worker": Policy(
        "WECHAT_LIVE_WORKER_ENABLED",
        1.0,
        timedelta(minutes=10),
        None,
        "a submission is never repeated; its result polled after each of `WECHAT_PUBLISH_POLL_DELAYS`, then "
        "hourly, for 24 h",
        calls=Calls(lambda settings: 1, "1 (freepublish/submit)"),
    ),
    "edition": Policy(
        "WECHAT_EDITIONS_ENABLED",
        1.0,
        timedelta(minutes=10),
        5,
        "sendall a minute on with the same `clientmsgid` (45066, or no answer); polled as going live",
        calls=Calls(
            lambda settings: EDITION_MAX_ARTICLES + 2,
            f"{EDITION_MAX_ARTICLES + 2} (a draft/get per article, draft/add, sendall)",
        ),
    ),
    "stats": Policy(
        "WECHAT_STATS_ENABLED",
        60.0,
        timedelta(minutes=10),
        3,
        "an hour on",
        calls=Calls(
            lambda settings: min(settings.stats_days, STATS_PLATFORM_DAYS) + 1,
            f"`WECHAT_STATS_DAYS` (at most {STATS_PLATFORM_DAYS}) + 1 (a detail_list per publish day)",
        ),
    ),
    "comments": Policy(
        "WECHAT_COMMENTS_ENABLED",
        60.0,
        timedelta(minutes=5),
        None,
        "at the next fetch, `WECHAT_COMMENTS_MINUTES` on",
        calls=Calls(
            lambda settings: comment_pages(settings.comments_max),
            f"`WECHAT_COMMENTS_MAX` / {COMMENTS_PAGE} (its comment/list pages)",
        ),
    ),
    "feedback-indexer": Policy("FEEDBACK_INDEXER_ENABLED", 5.0, None, None, "at the next pass", settle=0.2),
    "wal-checkpointer": Policy("WAL_CHECKPOINTER_ENABLED", 0.5, None, None, "at the next pass"),
}


def platform_call_seconds(settings: Any) -> float:
    """One platform call's whole deadline: connecting and the whole answer, each `WECHAT_TIMEOUT_SECONDS`
    (services/platform/client.py)."""
    return 2 * settings.wechat_timeout_seconds


def lease_of(kind: str, settings: Any = None) -> timedelta:
    """How long a row `kind` takes is the pass's: its declared lease, or, for a kind that calls the platform
    (`settings` needed), long enough for all its calls at their whole deadlines, and MARGIN."""
    policy = POLICY[kind]
    assert policy.lease is not None, f"{kind} holds no row"
    if policy.calls is None:
        return policy.lease
    assert settings is not None, f"{kind}'s lease depends on WECHAT_TIMEOUT_SECONDS"
    calls = policy.calls.count(settings) + TOKEN_CALLS
    return max(policy.lease, timedelta(seconds=calls * platform_call_seconds(settings)) + MARGIN)


def attempts_of(kind: str) -> int:
    attempts = POLICY[kind].attempts
    assert attempts is not None, f"{kind} gives up as its retry says"
    return attempts


def poll_delay(delays: tuple[float, ...], polls: int) -> float:
    """Seconds before the poll after `polls` polls: the kind's delays, then hourly."""
    return delays[polls] if polls < len(delays) else HOURLY


def policy_table() -> str:
    """POLICY as the Markdown table docs/conventions.md carries (tests/operations/test_background.py)."""
    rows = ["| work | switch | looks every | a taken row held | attempts | tried again |", "|" + " --- |" * 6]
    for kind, policy in POLICY.items():
        held = f"{policy.lease.total_seconds() / 60:g} min" if policy.lease else "–"
        if policy.calls is not None:
            held += (
                f"; longer if {policy.calls.words} + {TOKEN_CALLS} (tokens) platform calls at 2 × "
                f"`WECHAT_TIMEOUT_SECONDS` each, + {MARGIN.total_seconds() / 60:g} min, take longer"
            )
        every = f"{policy.every:g} s" + (f" (settles {policy.settle:g} s)" if policy.settle else "")
        rows.append(f"| `{kind}` | `{policy.switch}` | {every} | {held} | {policy.attempts or '–'} | {policy.retry} |")
    return "\n".join(rows) + "\n"


def job(kind: str, run: Callable[[float], Any], name: str | None = None, every: float | None = None) -> "Job":
    """A Job of `kind` (a row of POLICY): `name` for a kind with a job per channel, `every` a shorter look."""
    policy = POLICY[kind]
    return Job(name or kind, run, min(policy.every, every or policy.every), settle=policy.settle)


@dataclass
class Job:
    name: str  # for wake() and /metrics
    run: Callable[[float], Any]  # one pass, given the time.monotonic() after which it takes no more rows
    every: float  # seconds between passes when nothing wakes it
    seconds: float = 30.0  # a pass's time for taking rows (a row under way finishes: its calls have timeouts)
    settle: float = 0.0  # after a wake-up, so a burst goes out in one pass
    due: float = 0.0  # time.monotonic() of its next pass


def wake(name: str, after: float = 0.0) -> None:
    """Job `name`'s next pass in this process comes within `after` seconds (or its settle time, if longer);
    called inside immediate(), once it has ended: the pass reads its rows outside the write lock, so woken
    before the commit it would find nothing and wait its whole `every`."""
    after_write(lambda: _ring(name, after))


def _ring(name: str, after: float) -> None:
    at = time.monotonic() + after
    for scheduler in list(_SCHEDULERS):
        scheduler.wake(name, at)


class Scheduler:
    """Runs each job's passes on a thread of its own, with its own database connection, until stopped: with
    the app in the tests, at shutdown (serving.py), and before `db` is bound anew (models.base). A thread per
    job, so a pass that waits on a slow receiver holds back no other kind of work."""

    def __init__(self, jobs: list[Job]):
        assert len({job.name for job in jobs}) == len(jobs), "a job's name is its wake-up address"
        self.jobs, self.woken, self.lock, self.stopping = jobs, dict[str, float](), threading.Lock(), threading.Event()
        self.bells = {job.name: threading.Event() for job in jobs}
        self.threads = [threading.Thread(target=self._run, args=(job,), name=job.name, daemon=True) for job in jobs]

    def start(self) -> None:
        _SCHEDULERS.append(self)
        register_background(lambda: self.stop(timeout=60))  # passes are bounded by their own time
        for thread in self.threads:
            thread.start()

    def wake(self, name: str, at: float) -> None:
        if name in self.bells:
            with self.lock:
                self.woken[name] = min(at, self.woken.get(name, at))
            self.bells[name].set()

    def _run(self, job: Job) -> None:
        bell = self.bells[job.name]
        while not self.stopping.is_set():
            bell.clear()  # before reading `woken`: a wake-up after this rings again
            with self.lock:
                woken = self.woken.pop(job.name, None)
            if woken is not None:
                job.due = min(job.due, max(woken, time.monotonic() + job.settle))
            if job.due <= time.monotonic():
                try:
                    with db.connection_context():
                        job.run(time.monotonic() + job.seconds)
                except Exception:  # the thread must survive anything and try again
                    log.exception("%s pass failed", job.name)
                PASSES[job.name] += 1
                job.due = time.monotonic() + job.every
            bell.wait(max(0.0, job.due - time.monotonic()))

    def is_alive(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)

    def stop(self, timeout: float = 5) -> None:
        """Every thread asked at once, then each waited for within what is left of `timeout`."""
        self.stopping.set()
        for bell in self.bells.values():
            bell.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            if thread.ident is not None:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self in _SCHEDULERS:
            _SCHEDULERS.remove(self)


def claim(
    model: Any,
    due: Any,
    order: tuple[Any, ...],
    changes: dict[Any, Any],
    then: Callable[[Any], Any] | None = None,
    *,
    version: Any = None,
    vet: Callable[[Any], bool] | None = None,
) -> Any:
    """The first `due` row of `model` (in `order`) with `changes` written (a lease, a status), or None: taken by
    another process since it was read, the next is tried. The candidate is read outside the write lock: an idle
    pass takes no lock. Inside it the row must still be `due` and, given `version` (a column every change of
    the row moves), at the version read, so what the read saw still holds. `vet(row)` runs first on the row
    as it is then and may refuse it (having written why): that row is returned unchanged by `changes`.
    `then(row)` runs in the claim's transaction after the changes."""
    for _ in range(3):
        candidate = model.select(model.id, *([version] if version else [])).where(due).order_by(*order).first()
        if candidate is None:
            return None
        still = (model.id == candidate.id) & due
        if version is not None:
            still &= version == getattr(candidate, version.name)
        with immediate():
            if vet is not None:
                row = model.get_or_none(still)
                if row is None:
                    continue
                if not vet(row):
                    return model.get_by_id(candidate.id)
            if model.update(changes).where(still).execute():
                row = model.get_by_id(candidate.id)
                if then is not None:
                    then(row)
                return row
    return None
