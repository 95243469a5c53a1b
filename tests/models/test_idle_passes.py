"""An idle process takes no write lock: every job on the scheduler's timer, run once with rows
that exist but are not due, only reads. A pass that opened `immediate()` before it knew a row was due took
SQLite's global write lock (BEGIN IMMEDIATE) every second or two in every process, and queued behind any
writer for the busy timeout. The statements are counted on the connections (not timed): robust under load."""

import time
from datetime import timedelta

import app as service
from models import db
from models.chat import ChatCard
from models.comments import CommentFetch
from models.editions import Edition
from models.live import TaskLive
from models.outbox import OutboxMessage
from models.review import ReviewTask
from models.stats import StatsFetch
from rules.ids import iso, now_iso, utcnow
from services.owners import this_process
from services.stats.fetching import due_day
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.chat import chat_settings
from tests.helpers.publishing import platform_settings
from tests.helpers.review import article_payload, create_task

# Each job of app.JOBS, as these settings turn them all on.
EVERY_JOB = (
    "webhook-sender",
    "team-wecom",
    "wal-checkpointer",
    "feedback-indexer",
    "live-worker",
    "stats",
    "comments",
    "edition",
    "chat-cards",
)


def watch_write_locks(seen):
    """BEGIN IMMEDIATE statements on this thread's open connection (sqlite3's own trace callback) go to `seen`."""
    db.connection().set_trace_callback(lambda sql: seen.append(sql) if sql.startswith("BEGIN IMMEDIATE") else None)


def _nothing_due(tasks):
    """Rows of every kind of background work, each waiting for a later time or held by this live process."""
    now, soon = now_iso(), iso(utcnow() + timedelta(hours=1))
    pks = [ReviewTask.get(ReviewTask.task_id == task["id"]).id for task in tasks]
    live, scheduled, publishing, submitting = pks[:4]
    # What the tasks' creation enqueued (the agent's and the team's messages, the chat's cards): later.
    OutboxMessage.update(next_attempt_at=soon).execute()
    ChatCard.update(next_attempt_at=soon).execute()
    row = {"account": "silicon-rise", "draft_media_id": "media", "created_at": now, "updated_at": now, "at": now}
    TaskLive.create(**row, task=live, status="live", msg_data_id="2247483700", live_at=iso(utcnow() - timedelta(3)))
    TaskLive.create(**{**row, "at": soon}, task=scheduled, status="scheduled")
    TaskLive.create(**row, task=publishing, status="publishing", publish_id="p1", next_poll_at=soon)
    # Being submitted by this process, which runs: not interrupted.
    TaskLive.create(**row, task=submitting, status="submitting", owner=this_process(), submitted_at=now)
    CommentFetch.create(
        task=live, account="silicon-rise", msg_data_id="2247483700", article_index=0, next_at=soon, updated_at=now
    )
    edition = {"account": "silicon-rise", "task_ids": [tasks[4]["id"]], "created_at": now, "updated_at": now}
    # One whose sendall this process is making (its lease runs), one waiting for its next mass/get.
    Edition.create(**edition, edition_id="ed_sending", status="sending", owner=this_process(), next_at=soon)
    Edition.create(**edition, edition_id="ed_polled", status="sending", msg_id="1000001", next_at=soon)


def _stats_done(settings):
    """Yesterday's figures fetched already, the day before's retry not due yet."""
    day, now = due_day(settings), now_iso()
    StatsFetch.create(account="silicon-rise", day=day, status="done", attempts=1, updated_at=now)
    before = (utcnow() - timedelta(days=2)).date().isoformat()
    next_at = iso(utcnow() + timedelta(hours=1))
    StatsFetch.create(
        account="silicon-rise", day=before, status="failed", attempts=1, next_attempt_at=next_at, updated_at=now
    )


def test_an_idle_pass_of_every_job_takes_no_write_lock(make_app, fake, chat_apps):
    overrides = {
        **platform_settings(fake),
        **chat_settings(chat_apps),
        "REVIEW_AGENT_WEBHOOK_URL": "http://127.0.0.1:9/agent",
        "NOTIFY_WECOM_WEBHOOK_URL": "http://127.0.0.1:9/robot",
        "WECHAT_STATS_HOUR": 0,
    }
    with built_app(make_app, **overrides) as app:
        client, agent = app.test_client(), {"x-review-agent-token": AGENT_TOKEN}
        tasks = [create_task(client, agent, article_payload(topic=f"topic {n}")) for n in range(5)]
        settings = app.extensions["settings"]
        with db.connection_context():
            _nothing_due(tasks)
            _stats_done(settings)
        # Building them may write (the team's sender retires what the settings no longer send): not a pass.
        jobs = [job for _setting, make in service.JOBS for job in make(settings)]
        assert {job.name for job in jobs} == set(EVERY_JOB)

        taken = {}
        for job in jobs:
            write_locks = []
            with db.connection_context():  # the pass's own connection_context() finds this one open
                watch_write_locks(write_locks)
                job.run(time.monotonic() + 30)
            taken[job.name] = len(write_locks)
        assert taken == dict.fromkeys(taken, 0), "passes that took the write lock with nothing due"

        with db.connection_context():  # the rows were there, still as they were: nothing was due
            assert Edition.get(Edition.edition_id == "ed_sending").version == 1
            assert TaskLive.get(TaskLive.status == "submitting").owner == this_process()
            assert StatsFetch.select().where(StatsFetch.status == "done").count() == 1
            assert ChatCard.select().where(ChatCard.state == "to_send", ChatCard.attempts == 0).exists()
