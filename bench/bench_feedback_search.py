"""Feedback list with a keyword on 100,000 records, against baselines measured in the same run.

    python bench/bench_feedback_search.py [--rows 100000] [--runs 50]

Builds a temporary SQLite database through the real schema (FTS5 trigram index and its triggers
included), then times `services.feedback.queries.list_feedbacks` exactly as the admin list route
calls it (page 1 of 20, total, whole-table counts):

- baseline: a filter, no keyword;
- keyword of 3+ characters + a filter, through the FTS5 trigram index (common and rare keyword);
- keyword of 2 Chinese characters, with a filter and alone (below the trigram length: the CJK
  character index, whose candidates are then tested with LIKE);
- keyword of 2 Latin characters + a filter (LIKE over the filtered rows);
- the same 3+ character keyword through LIKE, i.e. without the index, to show what it buys.
Goal: a filtered keyword page p50 <= 50 ms on 100k rows.
"""

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models import db
from models import feedback as feedback_models
from models.base import init_database
from models.feedback import Feedback
from models.schema import upgrade
from rules.ids import iso, new_id
from services.feedback import queries
from services.feedback.indexing import drain

PHRASES = [
    "打开首页后应用闪退",
    "登录时提示网络错误",
    "图片加载很慢",
    "希望增加夜间模式",
    "支付页面白屏",
    "视频播放卡顿",
    "消息通知收不到",
    "账号无法绑定手机号",
    "文章内容有错别字",
    "搜索结果不准确",
    "the app crashes on launch",
    "cannot upload avatar",
    "dark mode please",
    "sync fails after update",
    "button text is cut off",
    "keyboard covers the input field",
    "order history is empty",
    "版本更新后耗电明显增加",
    "客服回复太慢",
    "分享到朋友圈失败",
    "字体太小看不清",
    "定位不准确",
]
RARE = "退款流程卡在第三步"  # in 0.5 % of the rows
TYPES = ["bug", "suggestion", "content", "account", "other"]
PLATFORMS = ["ios", "android", "web", "miniprogram"]
APPS = ["carbon-fitness", "silicon-rise", "reader"]
STATUSES = ["unprocessed"] * 6 + ["processing"] * 2 + ["processed"] * 2


def build(rows, seed=7):
    rng = random.Random(seed)
    start = datetime(2025, 11, 21, tzinfo=UTC)
    step = timedelta(days=365) / rows
    batch = []
    began = time.perf_counter()
    with db.atomic():
        for n in range(rows):
            created = iso(start + step * n)
            day = created[:10].replace("-", "")
            words = rng.sample(PHRASES, rng.randint(2, 5))
            if rng.random() < 0.005:
                words.append(RARE)
            batch.append(
                {
                    "feedback_id": new_id(),
                    "feedback_no": f"FB-{day}-{n:06d}",
                    "channel": "web",
                    "type": rng.choice(TYPES),
                    "title": words[0][:40],
                    "content": "，".join(words) + f"（{n}）",
                    "app_name": rng.choice(APPS),
                    "app_version": f"2.{rng.randint(0, 9)}.0",
                    "platform": rng.choice(PLATFORMS),
                    "user_id": f"user-{rng.randint(1, 20000)}",
                    "contact_email": f"u{rng.randint(1, 20000)}@example.com" if rng.random() < 0.3 else None,
                    "status": rng.choice(STATUSES),
                    "fingerprint": f"{n:064x}",
                    "created_at": created,
                    "updated_at": created,
                }
            )
            if len(batch) == 500:
                Feedback.insert_many(batch).execute()
                batch = []
        if batch:
            Feedback.insert_many(batch).execute()
        drain()
    return time.perf_counter() - began


def measure(filters, runs):
    queries.list_feedbacks(filters)  # warm the page cache
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        result = queries.list_feedbacks(filters)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], result["pagination"]["total"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        init_database(None, str(Path(folder) / "bench.db"))
        upgrade()
        with db.connection_context():
            seconds = build(args.rows)
            print(f"built {args.rows:,} rows (with both search indexes) in {seconds:.1f} s")
            page = {"page": 1, "pageSize": 20, "status": "all"}
            cases = [
                ("baseline: status=unprocessed, no keyword", {**page, "status": "unprocessed"}),
                ("keyword '应用闪退' + platform=ios (FTS)", {**page, "platform": "ios", "keyword": "应用闪退"}),
                (f"keyword '{RARE[:5]}' (rare) + status (FTS)", {**page, "status": "unprocessed", "keyword": RARE[:5]}),
                ("keyword 'crash' + appName (FTS)", {**page, "appName": "reader", "keyword": "crash"}),
                ("keyword 'crash' alone, page 50 (FTS)", {**page, "page": 50, "keyword": "crash"}),
                ("keyword '闪退' (2 chars, CJK index) + platform", {**page, "platform": "ios", "keyword": "闪退"}),
                ("keyword '闪退' alone (CJK index)", {**page, "keyword": "闪退"}),
                ("keyword 'ui' (2 Latin chars, LIKE) + platform", {**page, "platform": "ios", "keyword": "ui"}),
            ]
            results = [(label, *measure(filters, args.runs)) for label, filters in cases]
            ready = feedback_models.search_index_ready
            feedback_models.search_index_ready = lambda: False  # the same keyword without the index
            try:
                results.append(
                    (
                        "keyword '应用闪退' + platform=ios, LIKE (no index)",
                        *measure(cases[1][1], max(5, args.runs // 5)),
                    )
                )
            finally:
                feedback_models.search_index_ready = ready
    base = results[0][1]
    print(f"{'case':<52} {'p50 ms':>8} {'p95 ms':>8} {'matches':>8} {'p50/base':>9}")
    for label, p50, p95, total in results:
        print(f"{label:<52} {p50:8.2f} {p95:8.2f} {total:8d} {p50 / base:9.2f}")
    worst = max(p50 for label, p50, *_ in results if "FTS" in label or "CJK" in label)
    print(
        f"goal: filtered keyword page p50 <= 50 ms -> worst indexed case {worst:.2f} ms "
        f"({'met' if worst <= 50 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
