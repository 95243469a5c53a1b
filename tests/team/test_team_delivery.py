"""Team notifications under load and faults (docs/api.md §15), on SQLite and PostgreSQL: a refusing, slow
robot holds back no other channel and slows no request; a restart between a failure and its retry
loses nothing; two processes send each message once; a burst reaches a robot in at most 20 messages
a minute, folded into digests."""

import json
import re
import time
from collections import Counter
from contextlib import contextmanager

import pytest
import requests

from models import db
from services.ratelimit import SlidingWindowLimiter
from services.team.sender import ROBOT_RATE, deliver
from tests.helpers import team as team_helpers
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.review import article_payload, create_task
from tests.helpers.served import METRICS_TOKEN, served, wait_for_passes
from tests.helpers.team import robot_settings, send_pass, sender_of, team_rows
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}


@contextmanager
def running(make_app, **settings):
    """The app with its outbox senders running; they stop (and the connection closes) afterwards."""
    app = make_app(WEBHOOK_SENDER_ENABLED=True, TEAM_MESSAGES_ENABLED=True, CHAT_CARDS_ENABLED=True, **settings)
    try:
        yield app
    finally:
        app.extensions["scheduler"].stop()
        if not db.is_closed():
            db.close()


def topics_in(texts):
    return {topic for text in texts for topic in re.findall(r"】(任务\d{2}号)", text)}


def create_timed(client, numbers):
    """Seconds spent creating a task for each of `numbers` (topic 任务NN号)."""
    started = time.perf_counter()
    for n in numbers:
        create_task(client, AGENT, article_payload(topic=f"任务{n:02d}号"))
    return time.perf_counter() - started


def test_a_refusing_slow_robot_holds_back_no_channel_and_slows_no_creation(make_app, robots):
    with running(make_app) as app:  # no channel configured: the baseline
        client = app.test_client()
        create_timed(client, range(90, 92))  # warm up
        baseline = create_timed(client, range(80, 90))
    robots["wecom"].delay = 1.0  # each answer takes 1 s, and the first three are refusals (45009)
    robots["wecom"].fail_next(3)  # retried 3 s apart: its first text comes ≥ 13 s on, after the others'
    with running(make_app, **robot_settings(robots, REVIEW_WEBHOOK_RETRY_DELAYS="3,3,3,3")) as app:
        client = app.test_client()
        create_timed(client, range(70, 72))
        # The rest come after the first refusal, in another digest: what a loaded machine does when creating
        # takes longer than a pass's settle (CI of stop 50's successor: 3 attempts where 4 were assumed).
        wait_until(lambda: robots["wecom"].attempts, 15, "no attempt at the slow robot")
        notified = create_timed(client, range(10))
        # Wide margin: writing three outbox rows costs little; waiting on the robot would cost 10 s or more.
        assert notified < 4 * baseline + 3, (notified, baseline)
        wanted = {f"任务{n:02d}号" for n in (*range(70, 72), *range(10))}
        wait_until(
            lambda: all(topics_in(robots[k].texts) == wanted for k in ("feishu", "dingtalk")), 20, "the others' texts"
        )
        assert robots["wecom"].texts == []  # still refusing: nobody waited for it
        wait_until(lambda: topics_in(robots["wecom"].texts) == wanted, 40, "wecom's texts")  # after the retries
    attempts = robots["wecom"].attempts
    assert [reply["errcode"] for _body, reply in attempts] == [45009] * 3 + [0] * (len(attempts) - 3)
    assert {row.status for row in team_rows()} == {"sent"}
    # Each message counts the attempts that carried it, however the refusals fell on the digests.
    carried = Counter(topic for body, _ in attempts for topic in topics_in([json.dumps(body, ensure_ascii=False)]))
    assert {row.payload["topic"]: row.attempts for row in team_rows("wecom")} == carried
    # The first digest carries 70, and 71 too unless creating it took longer than the settle; the later tasks
    # came after the first refusal, so they were refused at least once too.
    first = topics_in([json.dumps(attempts[0][0], ensure_ascii=False)])
    assert "任务70号" in first and first <= {"任务70号", "任务71号"} and carried["任务00号"] >= 2


def test_a_restart_between_a_failure_and_its_retry_loses_nothing(make_app, robots):
    settings = {
        "NOTIFY_WECOM_WEBHOOK_URL": robots["wecom"].url,
        "REVIEW_WEBHOOK_RETRY_DELAYS": "1",
        "REVIEW_DEFAULT_LANGUAGE": "zh-CN",
    }
    robots["wecom"].fail_next(1)
    app = make_app(**settings)  # senders off: one pass by hand, then the process "stops"
    create_task(app.test_client(), AGENT, article_payload(topic="任务01号"))
    assert send_pass(app) == {"wecom": 0}
    [row] = team_rows()
    assert (row.status, row.attempts) == ("pending", 1)
    db.close()
    with running(make_app, **settings):  # the same folders, a new process: its sender retries
        assert robots["wecom"].wait_for(1, timeout=15)
    [row] = team_rows()
    assert (row.status, row.attempts, topics_in(robots["wecom"].texts)) == ("sent", 2, {"任务01号"})


def test_two_processes_send_each_message_once(tmp_path, database_url, robots):
    settings = {
        "NOTIFY_WECOM_WEBHOOK_URL": robots["wecom"].url,
        "NOTIFY_FEISHU_WEBHOOK_URL": robots["feishu"].url,
        "NOTIFY_FEISHU_SECRET": team_helpers.FEISHU_SECRET,
        "WEBHOOK_SENDER_ENABLED": "true",
        "TEAM_MESSAGES_ENABLED": "true",
        "CHAT_CARDS_ENABLED": "true",
        "DATABASE_URL": database_url,
        "METRICS_TOKEN": METRICS_TOKEN,
    }
    with served(tmp_path, **settings) as (first, _), served(tmp_path, **settings) as (second, _):
        for n in range(12):
            answer = requests.post(
                f"{(first, second)[n % 2]}/api/review/agent/tasks",
                headers=AGENT,
                timeout=30,
                json=article_payload(topic=f"任务{n:02d}号"),
            )
            assert answer.status_code == 201, answer.text
        wanted = {f"任务{n:02d}号" for n in range(12)}
        for kind in ("wecom", "feishu"):
            wait_until(
                lambda kind=kind: topics_in(robots[kind].texts) == wanted, 30, lambda kind=kind: robots[kind].texts
            )
        for kind in ("wecom", "feishu"):  # a second delivery, were there one, would have come by then
            wait_for_passes((first, second), f"team-{kind}")
    for kind in ("wecom", "feishu"):
        named = [topic for text in robots[kind].texts for topic in re.findall(r"】(任务\d{2}号)", text)]
        assert sorted(named) == sorted(wanted), kind  # each once


def test_a_burst_of_25_tasks_reaches_a_robot_in_at_most_20_messages(make_app, robots):
    with running(make_app, NOTIFY_WECOM_WEBHOOK_URL=robots["wecom"].url, REVIEW_DEFAULT_LANGUAGE="zh-CN") as app:
        create_timed(app.test_client(), range(25))
        wanted = {f"任务{n:02d}号" for n in range(25)}
        wait_until(lambda: topics_in(robots["wecom"].texts) == wanted, 90, "the burst's texts")
    assert len(robots["wecom"].texts) <= 20
    assert all(reply["errcode"] == 0 for _body, reply in robots["wecom"].attempts)  # never over WeCom's limit
    assert any(text.startswith("**内容审核：") for text in robots["wecom"].texts)  # a digest


def test_a_full_minute_holds_messages_and_folds_them_into_one_digest(make_app, robots):
    now = [1_000_000.0]
    limiter = SlidingWindowLimiter({"robot": ROBOT_RATE}, clock=lambda: now[0])
    app = make_app(
        NOTIFY_FEISHU_WEBHOOK_URL=robots["feishu"].url,
        NOTIFY_FEISHU_SECRET=team_helpers.FEISHU_SECRET,
        REVIEW_DEFAULT_LANGUAGE="zh-CN",
    )
    [args] = sender_of(app)
    args = (*args[:-1], limiter)
    client = app.test_client()
    for n in range(20):
        create_timed(client, [n])
        with db.connection_context():
            assert deliver(*args) == 1
    create_timed(client, range(20, 25))
    with db.connection_context():
        assert deliver(*args) == 0  # the robot's minute is full: they wait
        now[0] += 60.5
        assert deliver(*args) == 5
    assert len(robots["feishu"].texts) == 21
    assert topics_in(robots["feishu"].texts[-1:]) == {f"任务{n:02d}号" for n in range(20, 25)}
    db.close()


def test_the_demo_points_a_robot_at_itself(capsys):
    from app import create_app
    from cli.demo import build_demo_app

    app, banner = build_demo_app(
        create_app,
        {"FEEDBACK_INDEXER_ENABLED": False, "WAL_CHECKPOINTER_ENABLED": False},
        exit_on_sigterm=False,
        latency=(0, 0),
    )
    try:
        text = "\n".join(banner)
        assert "Team robot" in text and "NOTIFY_WECOM_WEBHOOK_URL=https://qyapi.weixin.qq.com/" in text
        seen = []
        wait_until(
            lambda: seen.append(capsys.readouterr().out) or "[team robot]" in "".join(seen), 15, "the robot's line"
        )
        wait_until(
            lambda: seen.append(capsys.readouterr().out) or "新任务（待审核）" in "".join(seen),
            5,
            "the new task's text",
        )
        assert f"http://{app.config['HOST']}:{app.config['PORT']}/review/" in "".join(seen)
    finally:
        app.extensions["scheduler"].stop()
        db.close()
