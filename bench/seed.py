"""Prepare a benchmark database: N review tasks and N feedback rows, cloned in bulk from real ones."""

import logging
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datetime import UTC

from app import create_app
from bench.settings import ADMIN, AGENT_TOKEN, BENCH_CONFIG, CLIENT_TOKEN
from models import db
from rules.ids import iso, new_id

WORDS = [
    "登录",
    "闪退",
    "支付",
    "图片",
    "上传",
    "通知",
    "同步",
    "卡顿",
    "crash",
    "login",
    "payment",
    "upload",
    "夜间模式",
    "字体",
    "搜索",
    "导出",
    "视频",
    "音量",
    "定位",
    "会员",
]
ACCOUNTS = ["silicon-rise", "carbon-fitness"]
STATUSES = ["pending_review", "approved", "published", "rejected_rework"]


def task_payload(n, tag=""):
    return {
        "publicAccount": ACCOUNTS[n % 2],
        "topic": f"基准测试主题 {tag}{n}",
        "contentType": "article",
        "candidates": {
            "titles": [f"芯片的下一个十年 {n}", "摩尔定律之后"],
            "summaries": ["从制程到封装，一次看懂。"],
            "bodyOptions": [
                {
                    "id": "b1",
                    "outline": "背景|现状|展望",
                    "focuses": ["先进封装"],
                    "content": "# 背景\n\n" + "半导体产业正在经历新的变化。" * 40,
                }
            ],
        },
    }


def feedback_payload(n, rng=random, tag=""):
    words = rng.sample(WORDS, 3)
    return {
        "type": "bug",
        "title": f"{words[0]} 问题 {tag}{n}",
        "content": f"在{words[1]}之后出现{words[2]}，编号 {n}",
        "appName": "fitness-app",
        "appVersion": f"2.{n % 7}.0",
        "platform": ["ios", "android", "web"][n % 3],
        "deviceId": f"device-{tag}{n}",
    }


def _clone(model, template, count, vary, chunk=2000):
    fields = {f.name: getattr(template, f.name) for f in model._meta.sorted_fields if f.name != "id"}
    with db.atomic():
        for start in range(0, count, chunk):
            rows = [{**fields, **vary(n)} for n in range(start, min(count, start + chunk))]
            model.insert_many(rows).execute()


def seed(instance, uploads, rows, database_url=""):
    """Returns ids the scenarios use: task ids to read and a keyword that matches. `database_url`:
    an empty PostgreSQL database instead of the instance's SQLite file."""
    from models.feedback import Feedback
    from models.review import ReviewTask, TimelineEvent
    from services.auth import save_admin
    from services.feedback.indexing import drain

    logging.basicConfig(level=logging.WARNING)  # no access log line per seeding request
    app = create_app(
        {
            **BENCH_CONFIG,
            "REVIEW_INSTANCE_PATH": str(instance),
            "REVIEW_UPLOADS_PATH": str(uploads),
            # the server process indexes; seed drains itself
            "FEEDBACK_INDEXER_ENABLED": False,
            "DATABASE_URL": database_url,
        },
        serve=True,
    )
    client = app.test_client()
    agent, feedback_client = {"x-review-agent-token": AGENT_TOKEN}, {"x-feedback-client-token": CLIENT_TOKEN}
    created = client.post("/api/review/agent/tasks", json=task_payload(0), headers=agent)
    assert created.status_code == 201, created.get_data(as_text=True)
    feedback = client.post("/api/feedbacks", json=feedback_payload(0), headers=feedback_client)
    assert feedback.status_code == 201, feedback.get_data(as_text=True)
    rng = random.Random(7)
    with db.connection_context():
        save_admin(ADMIN[0], ADMIN[1], "review,feedback")
        task = ReviewTask.get()
        event = TimelineEvent.get()

        def stamp(n):
            return iso_at(n, rows)

        _clone(
            ReviewTask,
            task,
            rows - 1,
            lambda n: {
                "task_id": f"bench{n:07d}",
                "public_account": ACCOUNTS[n % 2],
                "status": STATUSES[n % 4],
                "topic": f"基准测试主题 {n}",
                "created_at": stamp(n),
                "updated_at": stamp(n),
            },
        )
        ids = {t.task_id: t.id for t in ReviewTask.select(ReviewTask.id, ReviewTask.task_id)}
        _clone(
            TimelineEvent,
            event,
            rows - 1,
            lambda n: {"event_id": f"evt{n:07d}", "task": ids[f"bench{n:07d}"], "at": stamp(n)},
        )
        template = Feedback.get()
        _clone(
            Feedback,
            template,
            rows - 1,
            lambda n: {
                "feedback_id": f"fb{n:07d}",
                "feedback_no": f"FB-20260101-B{n:06d}",
                "fingerprint": new_id(),
                **_feedback_columns(feedback_payload(n + 1, rng)),
                "created_at": stamp(n),
                "updated_at": stamp(n),
            },
        )
        drain()  # both keyword indexes hold every row, as after the indexer caught up
        if not database_url:
            db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute_sql("ANALYZE")
    return {"task_ids": [f"bench{n:07d}" for n in range(0, rows - 1, max(1, rows // 1000))], "keyword": "闪退"}


def _feedback_columns(payload):
    return {
        "title": payload["title"],
        "content": payload["content"],
        "app_version": payload["appVersion"],
        "platform": payload["platform"],
        "device_id": payload["deviceId"],
    }


def iso_at(n, rows):
    """Spread rows over the last ~30 days, newest last."""
    from datetime import datetime, timedelta

    start = datetime(2026, 10, 20, tzinfo=UTC)
    return iso(start + timedelta(seconds=n * (30 * 86400 / max(rows, 1))))
