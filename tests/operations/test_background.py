"""Background work: one scheduler runs every job, at once when woken, surviving a job that fails; a row is
claimed by one of several claimers; the WAL checkpointer keeps the WAL short outside the requests."""

import json
import os
import queue
import socket
import subprocess
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

import app as service
from models import OutboxMessage, ReviewTask, db
from models.comments import CommentFetch
from models.editions import Edition
from models.writes import CHECKPOINT_AFTER_BYTES, checkpoint_wal, immediate
from rules.ids import iso, now_iso, utcnow
from services import background, outbound, owners
from services.background import PASSES, POLICY, Job, Scheduler, claim, policy_table, wake
from services.editions import sending
from services.owners import this_process
from services.settings import SETTINGS
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.review import article_payload, create_task
from tests.helpers.waiting import wait_until

CHUNK = 1024 * 1024


def _write(megabytes):
    """Commit `megabytes` of new pages, one MiB per transaction."""
    with db.connection_context():
        db.execute_sql("CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, blob BLOB)")
        for _ in range(megabytes):
            with db.atomic():
                db.execute_sql("INSERT INTO scratch (blob) VALUES (randomblob(?))", (CHUNK,))


def _wal_size(app):
    return os.path.getsize(os.path.join(app.config["REVIEW_INSTANCE_PATH"], "review.db-wal"))


def test_request_connections_leave_checkpoints_to_the_service(app):
    with db.connection_context():
        assert db.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == 10000  # the safety net only


def test_checkpoint_runs_only_past_its_threshold(app):
    _write(1)
    with db.connection_context():
        assert checkpoint_wal() is False  # 1 MiB: not yet
        assert checkpoint_wal(min_bytes=CHUNK // 2) is True
        # Everything was copied back: a second checkpoint finds no frame left to copy.
        busy, frames, copied = db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and frames == copied


def test_the_checkpointer_keeps_the_wal_bounded_under_writes(make_app):
    with built_app(make_app) as app:  # no checkpointer: the WAL grows until the 40 MiB safety net
        _write(12)
        assert _wal_size(app) > 12 * CHUNK
    with built_app(make_app, WAL_CHECKPOINTER_ENABLED=True) as app:
        worker = app.extensions["scheduler"]
        try:
            with db.connection_context():
                db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            for _ in range(6):  # 12 MiB again, with a pause for a whole pass of the worker after each 2 MiB
                _write(2)
                wanted = PASSES["wal-checkpointer"] + 2
                wait_until(lambda: PASSES["wal-checkpointer"] >= wanted, 30, "the checkpointer made no pass")
            # Each pass copied the WAL back, so writers started it over instead of growing it.
            assert _wal_size(app) <= CHECKPOINT_AFTER_BYTES + 3 * CHUNK
        finally:
            worker.stop()
        assert not worker.is_alive()


def test_a_wake_up_runs_its_job_at_once_and_a_failing_job_stops_no_other(app):
    passes = queue.Queue()

    def broken(_until):
        raise RuntimeError("a bug in one job")

    scheduler = Scheduler([Job("broken", broken, 3600), Job("counted", passes.put, 3600)])
    scheduler.start()
    try:
        passes.get(timeout=10)  # the first pass, at start
        assert passes.empty()
        wake("counted")
        passes.get(timeout=10)  # the next an hour early: woken
        wait_until(lambda: PASSES["broken"] >= 1, 10, "the broken job made no pass")  # on its own thread
    finally:
        scheduler.stop()
    assert not scheduler.is_alive()


def test_a_pass_can_ask_for_the_next_one_sooner_and_only_sooner(app):
    """wake(name, after=s): a row due in s seconds gets its pass then, not at the job's hourly look; a later
    `after` never delays a pass already due sooner."""
    passes = queue.Queue()
    scheduler = Scheduler([Job("soon", lambda _until: passes.put(time.monotonic()), 3600)])
    scheduler.start()
    try:
        passes.get(timeout=10)  # the first pass, at start
        asked = time.monotonic()
        wake("soon", after=0.3)
        wake("soon", after=7200)
        ran = passes.get(timeout=10)  # not an hour later
        assert ran - asked >= 0.3
    finally:
        scheduler.stop()


def test_a_wake_up_in_a_write_rings_once_it_has_ended(app):
    """A pass reads its rows outside the write lock (an idle one takes none): woken from inside the writing
    transaction it would look before the commit, find nothing, and wait its whole `every`."""
    scheduler = Scheduler([Job("woken", lambda _until: None, 3600)])  # not started: only its wake-ups are read
    background._SCHEDULERS.append(scheduler)
    try:
        with db.connection_context():
            with immediate():
                with immediate():  # a nested one ends inside the outer transaction: still not committed
                    wake("woken")
                assert "woken" not in scheduler.woken and not scheduler.bells["woken"].is_set()
            assert "woken" in scheduler.woken and scheduler.bells["woken"].is_set()
            scheduler.woken.clear()
            wake("woken")  # outside any write: at once
            assert "woken" in scheduler.woken
    finally:
        background._SCHEDULERS.remove(scheduler)


def test_of_several_claimers_exactly_one_gets_each_row(app):
    with db.connection_context():
        now = now_iso()
        OutboxMessage.insert_many(
            [
                {
                    "message_id": f"m{n}",
                    "task_id": "t",
                    "event_type": "e",
                    "payload": {},
                    "next_attempt_at": now,
                    "created_at": now,
                }
                for n in range(20)
            ]
        ).execute()
    taken, start = [], threading.Barrier(4)

    def claimer():
        start.wait()
        with db.connection_context():
            while (
                row := claim(
                    OutboxMessage,
                    OutboxMessage.next_attempt_at <= now,
                    (OutboxMessage.id,),
                    {OutboxMessage.next_attempt_at: "9999"},
                )
            ) is not None:
                taken.append(row.message_id)

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(taken) == sorted(f"m{n}" for n in range(20))


def _outbox_row(message_id):
    now = now_iso()
    with db.connection_context():
        OutboxMessage.create(
            message_id=message_id, task_id="t", event_type="e", payload={}, next_attempt_at=now, created_at=now
        )
    return OutboxMessage.message_id == message_id


def test_a_row_changed_between_the_read_and_the_lock_is_not_taken_at_its_old_version(app, monkeypatch):
    """`version`: a row another process changed after the claim read it is read again, never taken on what
    the first read saw; one that changes every time is left alone."""
    this = _outbox_row("v")
    entered = background.immediate

    def another_process_first():
        OutboxMessage.update(attempts=OutboxMessage.attempts + 1).where(this).execute()
        return entered()

    monkeypatch.setattr(background, "immediate", another_process_first)
    with db.connection_context():
        taken = claim(
            OutboxMessage, this, (OutboxMessage.id,), {OutboxMessage.status: "sent"}, version=OutboxMessage.attempts
        )
        row = OutboxMessage.get(this)
    assert taken is None
    assert (row.status, row.attempts) == ("pending", 3)


def test_a_claim_vetted_out_keeps_what_the_vet_wrote_and_none_of_the_changes(app):
    this = _outbox_row("w")

    def refuse(row):
        OutboxMessage.update(last_error="refused").where(OutboxMessage.id == row.id).execute()
        return False

    with db.connection_context():
        returned = claim(OutboxMessage, this, (OutboxMessage.id,), {OutboxMessage.status: "sent"}, vet=refuse)
        claimed = claim(OutboxMessage, this, (OutboxMessage.id,), {OutboxMessage.status: "sent"}, vet=lambda row: True)
    assert (returned.status, returned.last_error) == ("pending", "refused")
    assert claimed.status == "sent"


def _a_stopped_process():
    """The claim owner of a process of this host that has stopped (services.owners.gone says so)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return json.dumps({"host": socket.gethostname(), "pidns": owners._pid_namespace(), "pid": child.pid})


def _another_process_claims_first(monkeypatch, claim_it):
    """Before the first write lock of the claim under test, another (living) process claims the row."""
    entered, done = background.immediate, []

    def first_the_other():
        if not done:
            done.append(claim_it())
        return entered()

    monkeypatch.setattr(background, "immediate", first_the_other)
    return done


def test_a_stopped_sender_s_edition_taken_by_another_process_meanwhile_is_not_taken_again(make_app, monkeypatch):
    """The sender's process is gone, and two processes see it: the one that takes the edition first has it;
    the other, whose read of the owner came before that, does not take it too (a second sendall)."""
    app = make_app()
    now = now_iso()
    with db.connection_context():
        Edition.create(
            edition_id="ed_1",
            account="silicon-rise",
            status="sending",
            task_ids=[],
            draft_media_id="combined",
            owner=_a_stopped_process(),
            next_at=iso(utcnow() + timedelta(minutes=5)),
            created_at=now,
            updated_at=now,
        )
        alive = this_process()
        taken = _another_process_claims_first(
            monkeypatch,
            lambda: (
                Edition.update(owner=alive, version=Edition.version + 1).where(Edition.edition_id == "ed_1").execute()
            ),
        )
        assert sending._claim_send(app.extensions["settings"]) is None
        row = Edition.get(Edition.edition_id == "ed_1")
    assert taken == [1] and (row.owner, row.attempts, row.version) == (alive, 0, 2)


def test_a_stopped_fetch_taken_by_another_process_meanwhile_is_not_taken_again(make_app, monkeypatch):
    app = make_app()
    now, lease = now_iso(), iso(utcnow() + timedelta(minutes=5))
    task = create_task(app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload())
    with db.connection_context():
        pk = ReviewTask.get(ReviewTask.task_id == task["id"]).id
        CommentFetch.create(
            task=pk,
            account="silicon-rise",
            msg_data_id="2247483700",
            article_index=0,
            status="running",
            owner=_a_stopped_process(),
            lease_until=lease,
            next_at=now,
            updated_at=now,
        )
        theirs = iso(utcnow() + timedelta(minutes=6))
        _another_process_claims_first(
            monkeypatch,
            lambda: CommentFetch.update(owner=this_process(), lease_until=theirs).execute(),
        )
        changes = {CommentFetch.owner: "the second", CommentFetch.lease_until: iso(utcnow() + timedelta(minutes=7))}
        stopped = owners.orphaned(CommentFetch, CommentFetch.status == "running", CommentFetch.lease_until)
        assert claim(CommentFetch, stopped, (CommentFetch.id,), changes) is None
        assert CommentFetch.get().lease_until == theirs


def test_a_chat_cards_lease_outlasts_a_send_that_fetches_its_token_twice():
    """A card's send: the token, the call, and both once more when the token was refused, each an attempt
    of services.outbound: a shorter lease let a second process send the card again meanwhile."""
    assert background.lease_of("chat-cards").total_seconds() > 4 * (outbound.ATTEMPT_SECONDS + outbound.CONNECT_SECONDS)


@pytest.mark.parametrize("timeout", [20.0, 600.0])
def test_a_lease_outlasts_every_platform_call_its_work_may_make(make_app, timeout):
    """Each call may take 2 × WECHAT_TIMEOUT_SECONDS, and a refused token adds four (the first, a renewal
    as usual, then by force, the call again): statistics call once per
    publish day of WECHAT_STATS_DAYS (the platform's 30 at most) and once more, comments once per 49 of
    WECHAT_COMMENTS_MAX (5,000), an edition once per article (8) and twice more, going live once."""
    app = make_app(WECHAT_TIMEOUT_SECONDS=timeout, WECHAT_STATS_DAYS=90)
    settings = app.extensions["settings"]
    calls = {"stats": 31, "comments": 103, "edition": 10, "live-worker": 1}
    for kind, count in calls.items():
        assert background.lease_of(kind, settings).total_seconds() > (count + 4) * 2 * timeout, kind


def test_every_kind_of_work_is_one_row_of_the_policy_the_docs_print():
    """services.background.POLICY is the one table: app.JOBS makes a job for each row and no other, each
    switch is a declared setting, and docs/conventions.md carries the table as printed."""
    assert sorted(kind for kind, _make in service.JOBS) == sorted(POLICY)
    assert {policy.switch for policy in POLICY.values()} <= set(SETTINGS.fields)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text(encoding="utf-8")
    carried = "\n".join(line.strip() for line in docs.splitlines() if line.strip().startswith("| `"))
    for row in policy_table().splitlines()[2:]:
        assert row in carried, f"docs/conventions.md: paste services.background.policy_table() in ({row})"
