"""Fetching readers' comments (docs/api.md §23, docs/performance.md): one pass over the live articles against
the fake platform over HTTP, as the articles and their comments grow, printed as ratios against the first
size of the same run (linear work: a ratio near the size's ratio).

    python bench/bench_comments.py [--sizes 10x100,100x100,10x1000]

A size AxC is A live articles of one account with C comments each (10x100, 1,000 comments, is the baseline;
100x100 the issue's 10,000 comments of 100 articles; 10x1000 longer lists per article). For each size, three
passes of services.comments.fetching.fetch (force, as `flask --app app fetch-comments` runs it):

- "first": every comment new (paged by 49, inserted, each article's webhook enqueued): wall time, and the time
  inside the write lock — every `immediate()` block the pass enters (services.comments.fetching's, and
  services.background.claim's for the claims), timed around the block by wrapping the name those two modules
  call, waiting for the lock included (nothing else writes here, so it is the time held);
- "again": the same lists once more, nothing new (the pass every WECHAT_COMMENTS_MINUTES makes): time and lock;
- "memory": the first pass once more on emptied tables, under tracemalloc: the peak of Python's allocations
  during the pass (its time is not reported: tracing slows it).
"""

import argparse
import logging
import sys
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import services.background
import services.comments.fetching as fetching
from app import create_app
from bench.common import work_folder
from bench.seed import task_payload
from bench.settings import AGENT_TOKEN, BENCH_CONFIG
from cli.demo import platform_settings, start_fake_platform
from models import OutboxMessage, ReviewTask, TaskLive, db, immediate
from models.comments import CommentFetch, ReaderComment
from rules.ids import now_iso

ACCOUNT = "silicon-rise"


class LockClock:
    """immediate() as the comments pass calls it, with the seconds spent inside each block added up."""

    def __init__(self):
        self.seconds, self.blocks = 0.0, 0

    @contextmanager
    def __call__(self, database=None):
        started = time.perf_counter()
        try:
            with immediate(database):
                yield
        finally:
            self.seconds += time.perf_counter() - started
            self.blocks += 1


def live_articles(app, fake, articles, comments, tag):
    """`articles` tasks live on ACCOUNT, here and on the fake, each with `comments` readers' comments."""
    client = app.test_client()
    appid = app.extensions["settings"].wechat_credentials[ACCOUNT].appid
    for n in range(articles):
        payload = {**task_payload(n, tag), "publicAccount": ACCOUNT}
        created = client.post("/api/review/agent/tasks", json=payload, headers={"x-review-agent-token": AGENT_TOKEN})
        msg_data_id = f"{tag}{n:05d}"  # the platform's are numbers
        with immediate():
            TaskLive.create(
                task=ReviewTask.get(ReviewTask.task_id == created.get_json()["id"]),
                account=ACCOUNT,
                draft_media_id="m",
                status="live",
                at=now_iso(),
                msg_data_id=msg_data_id,
                live_at=now_iso(),
                created_at=now_iso(),
                updated_at=now_iso(),
            )
        with fake._lock:
            fake.publishes[f"p{msg_data_id}"] = {
                "appid": appid,
                "status": 0,
                "msg_data_id": msg_data_id,
                "article_id": f"ARTICLE_{msg_data_id}",
                "articles": [{"title": f"article {n}", "need_open_comment": 1}],
            }
        fake.add_comments(msg_data_id, 0, comments)


def timed_pass(app, clock):
    """One forced pass: (seconds, seconds inside the write lock, lock blocks, its summary)."""
    clock.seconds, clock.blocks = 0.0, 0
    started = time.perf_counter()
    with app.app_context():
        summary = fetching.fetch(app.extensions["settings"], force=True)
    assert not summary["failed"], summary["failed"]
    return time.perf_counter() - started, clock.seconds, clock.blocks, summary


def measure(fake, base_url, articles, comments, clock):
    work = work_folder("review-comments-")
    app = create_app(
        {
            **BENCH_CONFIG,
            **platform_settings(base_url, [ACCOUNT]),
            "REVIEW_INSTANCE_PATH": str(work / "instance"),
            "REVIEW_UPLOADS_PATH": str(work / "uploads"),
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_EDITIONS_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
            "WECHAT_COMMENTS_ENABLED": False,
        },
        serve=True,
    )
    with fake._lock:
        fake.publishes.clear()
        fake.comments.clear()
        fake.requests.clear()
    db.connect(reuse_if_open=True)
    live_articles(app, fake, articles, comments, f"9{articles:05d}{comments:05d}")
    first = timed_pass(app, clock)
    assert first[3]["stored"] == articles * comments, first[3]
    again = timed_pass(app, clock)
    assert again[3]["stored"] == 0, again[3]
    with immediate():
        for model in (ReaderComment, CommentFetch, OutboxMessage):
            model.delete().execute()
    tracemalloc.start()
    timed_pass(app, clock)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    calls = len(fake.requests_to("comment/list"))
    db.close()
    return {"first": first, "again": again, "peak": peak, "calls": calls}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10x100,100x100,10x1000")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    clock = LockClock()
    fetching.immediate = services.background.immediate = clock  # the two modules a pass takes the lock through
    fake, base_url = start_fake_platform()
    print(
        f"{'size':>9}{'comments':>9}{'calls':>7}{'first ms':>10}{'lock ms':>9}{'blocks':>8}"
        f"{'again ms':>10}{'lock ms':>9}{'peak MiB':>10}{'x size':>8}{'x time':>8}{'x lock':>8}{'x mem':>7}"
    )
    baseline = None
    try:
        for size in args.sizes.split(","):
            articles, comments = (int(part) for part in size.split("x"))
            got = measure(fake, base_url, articles, comments, clock)
            (took, lock, blocks, _), (again, again_lock, _, _) = got["first"], got["again"]
            row = (articles * comments, took, lock, got["peak"])
            baseline = baseline or row
            print(
                f"{size:>9}{row[0]:>9}{got['calls']:>7}{took * 1000:>10.0f}{lock * 1000:>9.0f}{blocks:>8}"
                f"{again * 1000:>10.0f}{again_lock * 1000:>9.0f}{got['peak'] / 2**20:>10.1f}"
                + "".join(f"{row[i] / baseline[i]:>{w}.1f}" for i, w in ((0, 8), (1, 8), (2, 8), (3, 7)))
            )
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
