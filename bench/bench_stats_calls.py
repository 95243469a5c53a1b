"""Platform calls of the daily statistics fetch (docs/api.md §19, docs/performance.md): how many
getarticletotaldetail calls one account's day costs as its live articles and their publish days grow.

    python bench/bench_stats_calls.py [--articles 10,100,400] [--days 1,7,30]

The answer holds the contents published on the days asked, each with running totals from its publish day,
so the service asks once per distinct publish day within WECHAT_STATS_DAYS, never once per article. For each
size: n live articles spread evenly over d publish days (the latest yesterday), one fetch of yesterday
against the fake platform over HTTP; printed: the calls made, the calls a per-article fetch would make (n),
the ratio, the calls per article, and the time.
"""

import argparse
import logging
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import work_folder
from bench.seed import task_payload
from bench.settings import AGENT_TOKEN, BENCH_CONFIG
from cli.demo import platform_settings, start_fake_platform
from fakeplatform.freepublish import beijing_day
from models import ReviewTask, TaskLive, db, immediate
from rules.ids import iso, now_iso
from services.stats.fetching import fetch_day

ACCOUNT = "silicon-rise"


def live_articles(app, fake, count, days, tag):
    """`count` tasks live on ACCOUNT, here and on the fake, their publish days spread over the `days` days
    up to yesterday (Beijing, the zone set below)."""
    client = app.test_client()
    appid = app.extensions["settings"].wechat_credentials[ACCOUNT].appid
    for n in range(count):
        payload = {**task_payload(n, tag), "publicAccount": ACCOUNT}
        created = client.post("/api/review/agent/tasks", json=payload, headers={"x-review-agent-token": AGENT_TOKEN})
        back = 1 + n % days
        msg_data_id = f"{tag}{n}"
        went_live = datetime.fromisoformat(beijing_day(-back) + "T10:00:00+08:00")
        with immediate():
            TaskLive.create(
                task=ReviewTask.get(ReviewTask.task_id == created.get_json()["id"]),
                account=ACCOUNT,
                draft_media_id="m",
                status="live",
                at=now_iso(),
                msg_data_id=msg_data_id,
                live_at=iso(went_live),
                created_at=now_iso(),
                updated_at=now_iso(),
            )
        with fake._lock:
            fake.publishes[f"p{msg_data_id}"] = {
                "appid": appid,
                "status": 0,
                "msg_data_id": msg_data_id,
                "article_id": f"ARTICLE_{msg_data_id}",
                "day": beijing_day(-back),
            }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", default="10,100,400")
    parser.add_argument("--days", default="1,7,30")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    fake, base_url = start_fake_platform()
    print(
        f"{'articles':>9}{'publish days':>14}{'calls':>7}{'per article':>13}{'ratio':>8}{'calls/article':>15}{'ms':>8}"
    )
    try:
        for days in (int(d) for d in args.days.split(",")):
            for count in (int(a) for a in args.articles.split(",")):
                work = work_folder("review-stats-calls-")
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
                        "WECHAT_STATS_DAYS": max(days, 7),
                        "REVIEW_TIME_ZONE": "Asia/Shanghai",
                    },
                    serve=True,
                )
                settings = app.extensions["settings"]
                with fake._lock:
                    fake.publishes.clear()
                    fake.requests.clear()
                db.connect(reuse_if_open=True)
                live_articles(app, fake, count, days, f"{days}x{count}-")
                started = time.perf_counter()
                with app.app_context():
                    result = fetch_day(ACCOUNT, beijing_day(-1), settings, force=True)
                took = time.perf_counter() - started
                assert result is not None and result["error"] is None, result
                calls = len(fake.requests_to("getarticletotaldetail"))
                print(
                    f"{count:>9}{days:>14}{calls:>7}{count:>13}{count / calls:>8.1f}{calls / count:>15.3f}"
                    f"{took * 1000:>8.0f}"
                )
                db.close()
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
