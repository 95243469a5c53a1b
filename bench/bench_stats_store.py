"""Storing one datacube answer (docs/api.md §19, docs/performance.md): the time spent inside the write
lock as the answer's days grow, now and as the tree stored it before, measured in the same run.

    python bench/bench_stats_store.py [--days 500,2000,8000,20000] [--before-up-to 8000]

One live task and an answer of n days of figures for it (the article live n days ago). "now": the answer
is read and checked outside the lock (services/stats/fetching.read_answer), then stored inside it
(`store`: one read, batched upserts, one webhook per new day, each with its running totals). "before":
the old per-entry loop inside the lock (a get_or_none and a create per entry, then every earlier day
read again for each new day's totals), reproduced here as the baseline; quadratic, so only run up to
--before-up-to days.
"""

import argparse
import logging
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import work_folder
from bench.seed import task_payload
from bench.settings import AGENT_TOKEN, BENCH_CONFIG
from models import OutboxMessage, ReviewTask, TaskDayStats, TaskLive, db, immediate
from rules.ids import iso, now_iso, utcnow
from services.review.webhooks import enqueue_stats
from services.stats.fetching import read_answer, store
from services.stats.reading import days_of, totals


def answer(msg_data_id, days):
    end = date(2026, 11, 27)
    return [
        {
            "msgid": f"{msg_data_id}_1",
            "ref_date": end.isoformat(),
            "detail_list": [
                {"stat_date": (end - timedelta(days=n)).isoformat(), "read_user": n, "share_user": n // 3}
                for n in range(days)
            ],
        }
    ], end.isoformat()


def before(task_pk, items):
    """The old _store, inside the lock: per entry a read and a write, per new day all earlier days again."""
    fresh = []
    for entry in items[0]["detail_list"]:
        day = entry["stat_date"]
        values = {"read_user": entry["read_user"], "share_user": entry["share_user"], "fetched_at": now_iso()}
        existing = TaskDayStats.get_or_none((TaskDayStats.task == task_pk) & (TaskDayStats.day == day))
        if existing is None:
            TaskDayStats.create(task=task_pk, day=day, **values)
            fresh.append(day)
        else:
            TaskDayStats.update(**values).where(TaskDayStats.id == existing.id).execute()
    for day in fresh:
        so_far = [d for d in days_of(task_pk) if d["date"] <= day]
        enqueue_stats([(ReviewTask.get_by_id(task_pk).task_id, so_far[-1], totals(so_far))])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", default="500,2000,8000,20000")
    parser.add_argument("--before-up-to", type=int, default=8000)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    work = work_folder("review-stats-store-")
    app = create_app(
        {
            **BENCH_CONFIG,
            "REVIEW_INSTANCE_PATH": str(work / "instance"),
            "REVIEW_UPLOADS_PATH": str(work / "uploads"),
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_EDITIONS_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
            "WECHAT_COMMENTS_ENABLED": False,
            "REVIEW_TIME_ZONE": "UTC",
        },
        serve=True,
    )
    settings = app.extensions["settings"]
    client = app.test_client()
    print(f"{'days':>7}{'read (no lock) ms':>19}{'lock now ms':>13}{'lock before ms':>16}{'before/now':>12}")
    for n, days in enumerate(int(d) for d in args.days.split(",")):
        items, end = answer(f"26500{n}", days)
        lock_times = {}
        for way in ("now", "before"):
            if way == "before" and days > args.before_up_to:
                continue
            created = client.post(
                "/api/review/agent/tasks", json=task_payload(days, way), headers={"x-review-agent-token": AGENT_TOKEN}
            ).get_json()
            db.connect(reuse_if_open=True)
            task = ReviewTask.get(ReviewTask.task_id == created["id"])
            with immediate():
                TaskLive.create(
                    task=task,
                    account="silicon-rise",
                    draft_media_id="m",
                    status="live",
                    at=now_iso(),
                    msg_data_id=f"26500{n}" if way == "now" else f"b26500{n}",
                    live_at=iso(utcnow() - timedelta(days=days + 2)),
                    created_at=now_iso(),
                    updated_at=now_iso(),
                )
            started = time.perf_counter()
            kept = read_answer("silicon-rise", end, items, settings) if way == "now" else None
            read = time.perf_counter() - started
            started = time.perf_counter()
            with immediate():
                store(kept, end) if way == "now" else before(task.id, items)
            lock_times[way] = time.perf_counter() - started
            if way == "now":
                read_ms = read * 1000
        OutboxMessage.delete().execute()
        was = lock_times.get("before")
        before_ms, ratio = (was * 1000, was / lock_times["now"]) if was else (float("nan"), float("nan"))
        print(f"{days:>7}{read_ms:>19.0f}{lock_times['now'] * 1000:>13.0f}{before_ms:>16.0f}{ratio:>12.1f}")


if __name__ == "__main__":
    main()
