"""Memory of the dataset export (docs/api.md §20, docs/performance.md) as the decided tasks grow.

    python bench/bench_dataset.py [--counts 1000,10000] [--formats raw,sft,dpo,kto]

One article is decided through the HTTP API the way an editor and the agent do it: created with a prompt,
its title rejected and replaced by the agent's PATCH, its body edited, approved, then live with 7 days of
readers' figures. It is cloned in bulk (the task, its timeline, going live, the days) up to each count,
and every format is exported: through GET /api/review/dataset read as it streams (the route; timed without
tracemalloc, then again under it), and under tracemalloc through the service's generator
(services/export/dataset.py) and, as the baseline measured in the same run, with the same lines gathered
into one list (what a non-streaming export holds).
The streamed peaks stay flat from the first count to the last; the list grows with the tasks.
"""

import argparse
import io
import logging
import sys
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import work_folder
from bench.settings import ADMIN, AGENT_TOKEN, BENCH_CONFIG
from models import ReviewTask, TaskDayStats, TaskLive, TimelineEvent, db
from rules.ids import iso, parse_iso
from services.auth import save_admin
from services.export.dataset import dataset_lines, dataset_query

BODY = "# 背景\n\n" + "半导体产业正在经历新的变化，先进封装把几颗芯片装进一个壳里。\n\n" * 30
EDITED = BODY + "编辑补上了一句。"
AGENT = {"x-review-agent-token": AGENT_TOKEN}
MIB = 1024 * 1024


def decided_article(app):
    """The template task, decided through the API; returns its row id."""
    client, admin = app.test_client(), app.test_client()
    with db.connection_context():
        save_admin(ADMIN[0], ADMIN[1], "review,feedback")
    admin.post("/api/auth/login", data={"username": ADMIN[0], "password": ADMIN[1]})
    png = io.BytesIO()
    Image.new("RGB", (900, 500), (40, 90, 160)).save(png, "PNG")
    cover = client.post("/api/assets/upload", headers=AGENT, data={"file": (io.BytesIO(png.getvalue()), "c.png")})
    cover = cover.get_json()
    options = [
        {"id": "b1", "outline": "背景|展望", "focuses": ["封装"], "content": BODY},
        {"id": "b2", "outline": "背景|展望", "focuses": ["制程"], "content": BODY[::-1]},
    ]
    created = client.post(
        "/api/review/agent/tasks",
        headers=AGENT,
        json={
            "publicAccount": "silicon-rise",
            "topic": "芯片的下一个十年",
            "context": {"prompt": "写一篇芯片科普", "model": "m"},
            "candidates": {
                "titles": ["芯片的下一个十年", "摩尔定律之后"],
                "summaries": ["从制程到封装，一次看懂。"],
                "bodyOptions": options,
                "coverImages": [cover["url"]],
            },
        },
    ).get_json()
    selections = {
        "title": "芯片的下一个十年",
        "summary": "从制程到封装，一次看懂。",
        "body": BODY,
        "coverImage": {"assetId": cover["assetId"]},
    }
    steps = [
        admin.post(
            f"/api/review/tasks/{created['id']}/decision",
            json={
                "action": "reject_rework",
                "rejectedElements": ["title"],
                "rejectionReason": "style_mismatch",
                "rejectionNote": "标题太长",
                "selections": selections,
                "lockedSelections": {k: v for k, v in selections.items() if k != "title"},
            },
        ),
        client.patch(f"/api/review/agent/tasks/{created['id']}/elements", headers=AGENT, json={"title": "芯片三问"}),
        admin.post(
            f"/api/review/tasks/{created['id']}/decision",
            json={
                "action": "approve_without_publish",
                "bodyDraft": {"sourceBodyCandidateId": "b1", "markdown": EDITED},
                "selections": {**selections, "title": "芯片三问", "body": EDITED},
            },
        ),
    ]
    for step in steps:
        if step.status_code != 200:
            raise SystemExit(f"building the template failed: {step.status_code} {step.get_data(as_text=True)[:300]}")
    with db.connection_context():
        task = ReviewTask.get(ReviewTask.task_id == created["id"])
        now = task.decided_at
        TaskLive.create(
            task=task,
            account="silicon-rise",
            draft_media_id="m",
            status="live",
            at=now,
            publish_id="p",
            msg_data_id="1",
            article_id="a",
            article_url="https://mp.weixin.qq.com/s/a",
            live_at=now,
            created_at=now,
            updated_at=now,
        )
        for day in range(7):
            TaskDayStats.create(
                task=task,
                day=f"2026-11-{day + 10:02d}",
                read_user=100 + day,
                share_user=day,
                like_user=day,
                zaikan_user=None,
                collection_user=1,
                comment_count=0,
                fetched_at=now,
            )
        return task.id


def _rows(model, where):
    return [
        {f.name: getattr(row, f.name) for f in model._meta.sorted_fields if f.name != "id"}
        for row in model.select().where(where)
    ]


def grow(template_pk, have, want, chunk=500):
    """Clones of the template task numbered have..want-1, each decided a second after the one before (a
    month ago)."""
    task = _rows(ReviewTask, ReviewTask.id == template_pk)[0]
    events = _rows(TimelineEvent, TimelineEvent.task == template_pk)
    live = _rows(TaskLive, TaskLive.task == template_pk)[0]
    days = _rows(TaskDayStats, TaskDayStats.task == template_pk)
    start = parse_iso(task["decided_at"]) - timedelta(days=30)  # decided before the export begins
    with db.atomic():
        for first in range(have, want, chunk):
            numbers = range(first, min(want, first + chunk))
            ReviewTask.insert_many(
                [{**task, "task_id": f"bench{n:07d}", "decided_at": iso(start + timedelta(seconds=n))} for n in numbers]
            ).execute()
            pks = {
                row.task_id: row.id
                for row in ReviewTask.select(ReviewTask.id, ReviewTask.task_id).where(
                    ReviewTask.task_id.in_([f"bench{n:07d}" for n in numbers])
                )
            }
            for n in numbers:
                pk = pks[f"bench{n:07d}"]
                TimelineEvent.insert_many(
                    [{**event, "task": pk, "event_id": f"e{n}-{i}"} for i, event in enumerate(events)]
                ).execute()
                TaskLive.insert({**live, "task": pk}).execute()
                TaskDayStats.insert_many([{**day, "task": pk} for day in days]).execute()


def timed(run):
    """(result of run(), seconds), untraced."""
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


def peak(run):
    """(result of run(), tracemalloc peak in MiB): what Python held at most while it ran."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1000,10000", help="decided tasks to export, in growing order")
    parser.add_argument("--formats", default="raw,sft,dpo,kto")
    args = parser.parse_args(argv)
    counts = [int(value) for value in args.counts.split(",")]
    formats = args.formats.split(",")
    logging.basicConfig(level=logging.WARNING)
    work = work_folder("review-dataset-")
    app = create_app(
        {
            **BENCH_CONFIG,
            "REVIEW_INSTANCE_PATH": str(work / "instance"),
            "REVIEW_UPLOADS_PATH": str(work / "uploads"),
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
        },
        serve=True,
    )  # no background thread allocating meanwhile
    template = decided_article(app)
    client = app.test_client()
    have = 1
    print(
        f"{'tasks':>6} {'format':6} {'lines':>6} {'MiB out':>8} {'route s':>8} {'route peak':>11} "
        f"{'service peak':>13} {'list peak (baseline)':>21}"
    )
    for count in counts:
        with db.connection_context():
            grow(template, have, count)
            db.execute_sql("ANALYZE")
        have = count
        for name in formats:

            def route(name=name):
                answer = client.get(f"/api/review/dataset?format={name}", headers=AGENT, buffered=False)
                size = lines = 0
                for chunk in answer.response:
                    size += len(chunk)
                    lines += chunk.count("\n" if isinstance(chunk, str) else b"\n")
                answer.close()
                return lines, size

            def service(name=name):
                with db.connection_context():
                    return sum(1 for _ in dataset_lines(dataset_query(name)))

            def as_list(name=name):
                with db.connection_context():
                    return len(list(dataset_lines(dataset_query(name))))

            (lines, size), seconds = timed(route)
            _, route_peak = peak(route)
            streamed, service_peak = peak(service)
            listed, list_peak = peak(as_list)
            assert lines == streamed == listed, (lines, streamed, listed)
            print(
                f"{count:6d} {name:6} {lines:6d} {size / MIB:8.1f} {seconds:8.2f} {route_peak:9.1f} MiB "
                f"{service_peak:9.1f} MiB {list_peak:17.1f} MiB"
            )


if __name__ == "__main__":
    main()
