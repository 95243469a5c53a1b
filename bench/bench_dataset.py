"""Memory of the dataset export (docs/api.md §20, docs/performance.md) as the decided tasks grow.

    python bench/bench_dataset.py [--size small|big] [--counts 1000,10000] [--formats raw,sft,dpo,trl-dpo,kto]
                                  [--served]

`--size big` builds the template as teams meet tasks (~350 KB stored: four long body options, 50 titles and
summaries, the body rejected twice and replaced; counts 50,200 by default); `--served` then measures, after
each count, the resident memory of a fresh `python app.py` on the same database while it streams each
format and four `raw` exports at once over HTTP.

One article is decided through the HTTP API the way an editor and the agent do it: created with a prompt,
its title rejected and replaced by the agent's PATCH, its body edited, approved, then live with 7 days of
readers' figures and 5 readers' comments, each with the agent's proposal (two sent as they were, two edited,
one waiting) and the reply. It is cloned in bulk (the task, its timeline, going live, the days, the
comments and proposals) up to each count,
and every format is exported: through GET /api/review/dataset read as it streams (the route; timed without
tracemalloc, then again under it), and under tracemalloc through the service's generator
(services/export/dataset.py) and, as the baseline measured in the same run, with the same lines gathered
into one list (what a non-streaming export holds).
The streamed peaks stay flat from the first count to the last; the list grows with the tasks.
"""

import argparse
import io
import json
import logging
import os
import subprocess
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import requests
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import ROOT, free_port, work_folder
from bench.settings import ADMIN, AGENT_TOKEN, BENCH_CONFIG
from models import CommentProposal, ReaderComment, ReviewTask, TaskDayStats, TaskLive, TimelineEvent, db
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
    return live_with_days(created["id"])


def live_with_days(task_id):
    """The decided task live, with 7 days of readers' figures; returns its row id."""
    with db.connection_context():
        task = ReviewTask.get(ReviewTask.task_id == task_id)
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
        for number, state in enumerate(("sent", "edited", "sent", "edited", "proposed")):
            proposal = f"谢谢你的留言，第{number}个问题我们下一篇会展开。"
            reply = {"sent": proposal, "edited": proposal + "（编辑补充）", "proposed": None}[state]
            comment = ReaderComment.create(
                comment_id=f"cm_bench{number}",
                task=task,
                account="silicon-rise",
                msg_data_id="1",
                article_index=0,
                user_comment_id=number + 1,
                openid=f"oBenchReader{number}",
                reader=f"{number:08x}",
                content=f"第{number}个问题：" + "先进封装的散热怎么解决？" * 5,
                created_at=now,
                reply_content=reply,
                fetched_at=now,
            )
            CommentProposal.create(
                proposal_id=f"cp_bench{number}", comment=comment, content=proposal, created_at=now, state=state
            )
        return task.id


def _paragraphs(seed, chars):
    """Markdown of about `chars` characters, different for each seed (so no two options are the same)."""
    line = f"第{seed}稿：" + "半导体产业正在经历新的变化，先进封装把几颗芯片装进一个壳里，散热和良率成了新的难题。"
    return "# 背景\n\n" + "\n\n".join(f"{number}. {line}" for number in range(chars // (len(line) + 6)))


def decided_big_article(app, body_chars=10_000, options=4, rounds=2):
    """A task of the size teams meet (~350 KB stored): `options` long body options, 50 titles and 50
    summaries, the body rejected `rounds` times and replaced by the agent each time (the history holds
    each before/after and its diff), then edited and approved; returns its row id."""
    client, admin = app.test_client(), app.test_client()
    with db.connection_context():
        save_admin(ADMIN[0], ADMIN[1], "review,feedback")
    admin.post("/api/auth/login", data={"username": ADMIN[0], "password": ADMIN[1]})
    png = io.BytesIO()
    Image.new("RGB", (900, 500), (40, 90, 160)).save(png, "PNG")
    cover = client.post("/api/assets/upload", headers=AGENT, data={"file": (io.BytesIO(png.getvalue()), "c.png")})
    cover = cover.get_json()
    bodies = [_paragraphs(number, body_chars) for number in range(options)]
    created = client.post(
        "/api/review/agent/tasks",
        headers=AGENT,
        json={
            "publicAccount": "silicon-rise",
            "topic": "芯片的下一个十年",
            "context": {"prompt": "写一篇芯片科普，" + "要讲清楚先进封装。" * 200, "model": "m"},
            "candidates": {
                "titles": [f"芯片的下一个十年（第{n}版）" for n in range(50)],
                "summaries": [f"第{n}版摘要：" + "从制程到封装，一次看懂。" * 7 for n in range(50)],
                "bodyOptions": [
                    {"id": f"b{n}", "outline": "背景|展望", "focuses": ["封装"], "content": body}
                    for n, body in enumerate(bodies)
                ],
                "coverImages": [cover["url"]],
            },
        },
    ).get_json()
    selections = {
        "title": "芯片的下一个十年（第0版）",
        "summary": created["candidates"]["summaries"][0],
        "body": bodies[0],
        "coverImage": {"assetId": cover["assetId"]},
    }
    steps, body = [], bodies[0]
    for number in range(rounds):
        steps.append(
            admin.post(
                f"/api/review/tasks/{created['id']}/decision",
                json={
                    "action": "reject_rework",
                    "rejectedElements": ["body"],
                    "rejectionReason": "content_quality",
                    "rejectionNote": "再展开一些",
                    "selections": {**selections, "body": body},
                    "lockedSelections": {k: v for k, v in selections.items() if k != "body"},
                },
            )
        )
        body = _paragraphs(100 + number, body_chars)
        steps.append(
            client.patch(f"/api/review/agent/tasks/{created['id']}/elements", headers=AGENT, json={"body": body})
        )
    edited = body + "\n\n编辑补上了一句。"
    steps.append(
        admin.post(
            f"/api/review/tasks/{created['id']}/decision",
            json={
                "action": "approve_without_publish",
                "bodyDraft": {"sourceBodyCandidateId": "b0", "markdown": edited},
                "selections": {**selections, "body": edited},
            },
        )
    )
    for step in steps:
        if step.status_code != 200:
            raise SystemExit(f"building the template failed: {step.status_code} {step.get_data(as_text=True)[:300]}")
    return live_with_days(created["id"])


def stored_kib(pk):
    """The template's stored size: its row's text columns and its events' data, UTF-8."""
    with db.connection_context():
        task = ReviewTask.get_by_id(pk)
        texts = [ReviewTask._meta.fields[name].db_value(getattr(task, name)) for name in ReviewTask._meta.fields]
        texts += [
            json.dumps(e.data, ensure_ascii=False) for e in TimelineEvent.select().where(TimelineEvent.task == pk)
        ]
        return sum(len(text.encode()) for text in texts if isinstance(text, str)) / 1024


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
    comments = _rows(ReaderComment, ReaderComment.task == template_pk)
    proposals = {
        row.comment_id: _rows(CommentProposal, CommentProposal.comment == row.id)
        for row in ReaderComment.select().where(ReaderComment.task == template_pk)
    }
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
                clone_comments(pk, n, comments, proposals)


def clone_comments(pk, n, comments, proposals):
    """The template's comments and their proposals, as clone `n`'s (task row `pk`)."""
    ReaderComment.insert_many(
        [{**c, "task": pk, "comment_id": f"{c['comment_id']}_{n}", "msg_data_id": f"b{n}"} for c in comments]
    ).execute()
    ids = dict(
        ReaderComment.select(ReaderComment.comment_id, ReaderComment.id).where(ReaderComment.task == pk).tuples()
    )
    rows = [
        {**p, "comment": ids[f"{c}_{n}"], "proposal_id": f"{p['proposal_id']}_{n}"}
        for c, listed in proposals.items()
        for p in listed
    ]
    CommentProposal.insert_many(rows).execute()


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


def memory(pid):
    """(VmRSS, VmHWM) of a process, in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def served_growth(work, formats, at_once=4):
    """Each format exported once, then `raw` by `at_once` clients together, from a fresh `python app.py` on
    the prepared database, read over HTTP: {label: (resident MiB before, peak MiB, MiB after)} of that process
    (VmRSS, VmHWM), what an operator sees."""
    port = free_port()
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(work / "instance"),
        "REVIEW_UPLOADS_PATH": str(work / "uploads"),
        "PORT": str(port),
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "WEBHOOK_SENDER_ENABLED": "false",
        "TEAM_MESSAGES_ENABLED": "false",
        "CHAT_CARDS_ENABLED": "false",
        "WECHAT_LIVE_WORKER_ENABLED": "false",
        "WECHAT_EDITIONS_ENABLED": "false",
        "WECHAT_STATS_ENABLED": "false",
        "WECHAT_COMMENTS_ENABLED": "false",
    }
    server = subprocess.Popen(
        [sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"

    def export(name):
        with requests.get(f"{base}/api/review/dataset?format={name}", headers=AGENT, stream=True, timeout=600) as r:
            return sum(len(chunk) for chunk in r.iter_content(64 * 1024))

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the service did not start")
            time.sleep(0.2)
        export("sft")  # the first request's imports and caches are not the export's
        found = {}
        for label, names in [*((name, [name]) for name in formats), (f"raw x{at_once}", ["raw"] * at_once)]:
            before = memory(server.pid)[0]
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # VmHWM starts again from VmRSS
            with ThreadPoolExecutor(len(names)) as pool:
                list(pool.map(export, names))
            rss, hwm = memory(server.pid)
            found[label] = (before, hwm, rss)
        return found
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default=None, help="decided tasks to export, in growing order")
    parser.add_argument("--formats", default="raw,sft,dpo,trl-dpo,kto")
    parser.add_argument(
        "--size", choices=("small", "big"), default="small", help="small: ~18 KB tasks; big: ~350 KB (long bodies)"
    )
    parser.add_argument("--served", action="store_true", help="also the memory of a served python app.py")
    args = parser.parse_args(argv)
    counts = [int(value) for value in (args.counts or ("1000,10000" if args.size == "small" else "50,200")).split(",")]
    formats = args.formats.split(",")
    logging.basicConfig(level=logging.WARNING)
    work = work_folder("review-dataset-")
    app = create_app(
        {
            **BENCH_CONFIG,
            "REVIEW_INSTANCE_PATH": str(work / "instance"),
            "REVIEW_UPLOADS_PATH": str(work / "uploads"),
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_EDITIONS_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
            "WECHAT_COMMENTS_ENABLED": False,
        },
        serve=True,
    )  # no background thread allocating meanwhile
    template = decided_article(app) if args.size == "small" else decided_big_article(app)
    print(f"one task: {stored_kib(template):.0f} KiB stored (its row's JSON and its events' data)")
    client = app.test_client()
    have = 1
    print(
        f"{'tasks':>6} {'format':7} {'lines':>6} {'MiB out':>8} {'route s':>8} {'route peak':>11} "
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
                f"{count:6d} {name:7} {lines:6d} {size / MIB:8.1f} {seconds:8.2f} {route_peak:9.1f} MiB "
                f"{service_peak:9.1f} MiB {list_peak:17.1f} MiB"
            )

        if args.served:
            db.close()
            for label, (before, peak_mib, after) in served_growth(work, formats).items():
                print(
                    f"{count:6d} served {label:9} resident {before:5.0f} MiB, peak {peak_mib:5.0f} MiB "
                    f"(+{peak_mib - before:.0f}), after {after:5.0f} MiB"
                )


if __name__ == "__main__":
    main()
