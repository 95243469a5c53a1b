"""Readers' comments across processes (docs/api.md §23), black-box: `python app.py` processes on one store
with the comments job on, the fake platform and the agent's webhook receiver in the test. Each comment is
stored once and told once, each page asked once (one fetch per article at a time), and a process killed
mid-fetch loses nothing and doubles nothing once another takes the fetch over at its lease's end."""

import os
import signal
from contextlib import ExitStack

import pytest
from standardwebhooks import Webhook

from models import ReviewTask, TaskLive
from models.comments import CommentFetch
from rules.ids import iso, utcnow
from tests.helpers.live_processes import live_of, published, service, store_of
from tests.helpers.publishing import STATS_SECRET
from tests.helpers.served import wait_for_passes
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores
JOB = "comments"


@pytest.fixture
def comment_settings(settings, receiver):
    return {
        **settings,
        "WECHAT_COMMENTS_MINUTES": "1",
        "REVIEW_AGENT_WEBHOOK_URL": receiver.url,
        "REVIEW_AGENT_WEBHOOK_SECRET": STATS_SECRET,
        "REVIEW_AGENT_WEBHOOK_EVENTS": "review_task.comments",
        "REVIEW_WEBHOOK_RETRY_DELAYS": "0.2",
        "WEBHOOK_SENDER_ENABLED": "true",
        "TEAM_MESSAGES_ENABLED": "true",
        "CHAT_CARDS_ENABLED": "true",
    }


def live_article(tmp_path, settings, fake):
    """A task gone live through a process whose comments job is off -> (task, msg_data_id)."""
    fake.publish_seconds = 0.05
    with service(tmp_path, {**settings, "WECHAT_COMMENTS_ENABLED": "false"}) as (base, session, _process):
        task = published(base, session)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task)["status"] == "live", 30, "not live")
    database = store_of(tmp_path, settings)
    with database.bind_ctx([ReviewTask, TaskLive]), database.connection_context():
        live = TaskLive.get(TaskLive.task == ReviewTask.get(ReviewTask.task_id == task["id"]).id)
        return task, str(live.msg_data_id)


def fetch_row(tmp_path, settings, **changes):
    """The article's CommentFetch row in the processes' store, with `changes` written first (a test making a
    fetch due now, or naming its owner)."""
    database = store_of(tmp_path, settings)
    with database.bind_ctx([CommentFetch]), database.connection_context():
        if changes:
            CommentFetch.update(**changes).execute()
        return CommentFetch.get()


def stored(base, session, task):
    answer = session.get(f"{base}/api/review/tasks/{task['id']}/comments", timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def told(receiver):
    """(comment id, content) of every comment the webhooks carried, in the order they came."""
    bodies = [Webhook(STATS_SECRET).verify(body, headers) for headers, body in receiver.received]
    assert {b["type"] for b in bodies} <= {"review_task.comments"}
    return [(c["id"], c["content"]) for b in bodies for c in b["data"]["comments"]]


def test_two_processes_store_and_tell_each_comment_once(tmp_path, comment_settings, fake, receiver):
    task, msg_data_id = live_article(tmp_path, comment_settings, fake)
    fake.add_comments(msg_data_id, 0, 150)  # pages of 49: begin 0, 49, 98, 147
    fake.set_latency(paths={"comment/list": (1.0, 0.0)})  # a fetch lasts while the other process starts
    with ExitStack() as stack:
        (first, session, _), (second, _, _) = (stack.enter_context(service(tmp_path, comment_settings)) for _ in "ab")
        wait_until(lambda: len(stored(first, session, task)["comments"]) == 150, 60, "not all stored")
        wait_until(lambda: len(told(receiver)) >= 150, 30, "not all told")
        wait_for_passes([first, second], JOB, more=0, at_least=1)  # each process has looked
        wait_for_passes([first, second], "webhook-sender")  # what either would send more is sent
        body = stored(first, session, task)
    ids = [c["id"] for c in body["comments"]]
    assert len(set(ids)) == 150 and {c["content"] for c in body["comments"]} == {f"读者留言 {i}" for i in range(1, 151)}
    assert body["lastError"] is None and body["lastFetchedAt"]
    assert sorted(told(receiver)) == sorted((c["id"], c["content"]) for c in body["comments"])  # each once
    begins = sorted(call["json"]["begin"] for call in fake.requests_to("comment/list"))
    assert begins == [0, 49, 98, 147], begins  # one fetch, each page once
    assert fake.peak_waiting["/cgi-bin/comment/list"] == 1  # never two calls for the article at once


def test_a_process_killed_mid_fetch_loses_and_doubles_nothing(tmp_path, comment_settings, fake, receiver):
    task, msg_data_id = live_article(tmp_path, comment_settings, fake)
    fake.add_comments(msg_data_id, 0, 120)
    fake.hang_next("comment/list", 30)  # the first page's answer is held while the process dies
    with service(tmp_path, comment_settings) as (_base, _session, process):
        wait_until(lambda: len(fake.requests_to("comment/list")) == 1, 30, "no fetch")
        row = fetch_row(tmp_path, comment_settings)
        assert row.status == "running" and row.lease_until > iso(utcnow())
        os.kill(process.pid, signal.SIGKILL)  # between the claim and the platform's answer
        process.wait(timeout=10)
    fake.add_comment(msg_data_id, 0, "写在进程停下之后")
    # Another host's process could still be fetching: its fetch is left alone until its lease ends.
    elsewhere = '{"host": "another-host", "pidns": "pid:[1]", "pid": 4242}'
    fetch_row(tmp_path, comment_settings, owner=elsewhere)
    with service(tmp_path, comment_settings) as (base, session, _process):
        wait_for_passes([base], JOB, more=0, at_least=1)  # its look at start: the lease still holds
        assert fetch_row(tmp_path, comment_settings).status == "running"
        assert stored(base, session, task)["comments"] == [] and len(fake.requests_to("comment/list")) == 1
    # This host's killed process is known gone: the next process takes its fetch over at once, lease or not.
    fetch_row(tmp_path, comment_settings, owner=row.owner)
    with service(tmp_path, comment_settings) as (base, session, _process):
        wait_until(lambda: len(stored(base, session, task)["comments"]) == 121, 60, "not taken over")
        wait_until(lambda: len(told(receiver)) >= 121, 30, "not all told")
        wait_for_passes([base], "webhook-sender")
        body = stored(base, session, task)
    assert len({c["id"] for c in body["comments"]}) == 121 and body["lastError"] is None
    assert fetch_row(tmp_path, comment_settings).status == "idle"
    assert sorted(told(receiver)) == sorted((c["id"], c["content"]) for c in body["comments"])
    assert sorted(call["json"]["begin"] for call in fake.requests_to("comment/list")) == [0, 0, 49, 98]
