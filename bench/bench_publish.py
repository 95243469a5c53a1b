"""Wall time of one publish at the platform's real latency (docs/api.md §12), in one process:

    python bench/bench_publish.py [--latency-ms 150] [--jitter-ms 30] [--concurrency 4] [--rounds 3]

An article with a cover and N body images (N = 0, 5, 20) and an image post of 9 images, published
against the fake platform answering each call after latency ± jitter; each figure is the median of
`rounds` publishes, beside the floor of the same run ((ceil(images / concurrency) + 1) round trips:
one round of concurrent uploads per `concurrency` images, then the draft call; the token is cached)
and beside serial uploads (concurrency 1). Every publish uploads new images (nothing cached).
"""

import argparse
import io
import logging
import math
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import work_folder
from cli.demo import platform_settings, start_fake_platform
from models import db
from schemas.review import CreateTaskSchema
from services.assets import save_upload
from services.publishing import publish_task
from services.review import create_task, decide


def new_task(body):
    """The creation route's work: the body loaded by its schema, then the service."""
    return create_task(CreateTaskSchema().load(body))[1]


_colour = iter(range(1, 10**9))


def png(width, height):
    n = next(_colour)
    image = Image.new("RGB", (width, height), (n % 251, (n * 7) % 253, (n * 13) % 255))
    image.putpixel((0, 0), (n % 256, (n >> 8) % 256, (n >> 16) % 256))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def asset(settings, width, height):
    row, _ = save_upload(png(width, height), scope="review", file_name="bench.png", uploads_root=settings.uploads_path)
    return row


def approved_article(settings, body_images):
    cover = asset(settings, 900, 500)
    images = [asset(settings, 640, 360) for _ in range(body_images)]
    body = "\n\n".join(["# 基准", *(f"第 {i} 段\n\n![图{i}]({a.url})" for i, a in enumerate(images, 1))])
    task = new_task(
        {
            "publicAccount": "silicon-rise",
            "topic": "bench",
            "candidates": {
                "titles": ["基准文章"],
                "summaries": ["摘要"],
                "bodyOptions": [{"id": "b", "outline": "一", "focuses": ["基准"], "content": body}],
                "coverImages": [cover.url],
            },
        }
    )
    decide(
        task["id"],
        {
            "action": "approve_without_publish",
            "selections": {
                "title": "基准文章",
                "summary": "摘要",
                "body": body,
                "bodyImages": [],
                "coverImage": {"assetId": cover.asset_id},
            },
        },
        settings,
        actor_name="bench",
    )
    return task["id"], 1 + body_images


def approved_image_post(settings, count):
    images = [asset(settings, 600, 800) for _ in range(count)]
    task = new_task(
        {
            "publicAccount": "silicon-rise",
            "topic": "bench",
            "contentType": "image_post",
            "candidates": {
                "titles": ["基准图片"],
                "descriptions": ["描述"],
                "imageGroups": [{"id": "g", "images": [{"assetId": a.asset_id} for a in images]}],
                "commentSettings": [{"needOpenComment": True, "onlyFansCanComment": False}],
            },
        }
    )
    decide(
        task["id"],
        {
            "action": "approve_without_publish",
            "selections": {
                "title": "基准图片",
                "description": "描述",
                "images": [{"assetId": a.asset_id} for a in images],
                "coverCrop": {
                    "assetId": images[0].asset_id,
                    "cropPercentList": [{"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}],
                },
                "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
            },
        },
        settings,
        actor_name="bench",
    )
    return task["id"], count


def timed_publish(app, concurrency, make_task):
    app.config["WECHAT_UPLOAD_CONCURRENCY"] = concurrency
    settings = app.extensions["settings"] = type(app.extensions["settings"]).from_config(app.config)
    task_id, images = make_task(settings)
    started = time.perf_counter()
    answer = publish_task(task_id, "manual", "bench", settings)
    took = time.perf_counter() - started
    job = answer["publishJobs"][-1]
    if job["status"] != "succeeded":
        raise SystemExit(f"publish failed: {job['lastError']}")
    return took, images


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-ms", type=float, default=150)
    parser.add_argument("--jitter-ms", type=float, default=30)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the fake's and the service's request lines would bury the table
    work = work_folder("bench-publish-")
    fake, base_url = start_fake_platform()
    app = create_app(
        {
            "REVIEW_INSTANCE_PATH": str(work / "instance"),
            "REVIEW_UPLOADS_PATH": str(work / "uploads"),
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "FEEDBACK_INDEXER_ENABLED": False,
            "WAL_CHECKPOINTER_ENABLED": False,
            **platform_settings(base_url),
        },
        serve=True,
    )
    call = args.latency_ms / 1000
    with app.app_context(), db.connection_context():
        timed_publish(app, 1, lambda s: approved_article(s, 0))  # the token is fetched once, then cached
        fake.set_latency(call, args.jitter_ms / 1000)
        print(
            f"fake platform: {args.latency_ms:g} ms ± {args.jitter_ms:g} ms per call; concurrency "
            f"{args.concurrency}; median of {args.rounds}"
        )
        print(f"{'publish':<28}{'images':>7}{'floor':>9}{'concurrent':>12}{'÷ floor':>9}{'serial':>9}{'÷ floor':>9}")
        cases = [(f"article, cover + {n} body", lambda s, n=n: approved_article(s, n)) for n in (0, 5, 20)]
        cases.append(("image post of 9", lambda s: approved_image_post(s, 9)))
        for label, make in cases:
            concurrent = [timed_publish(app, args.concurrency, make) for _ in range(args.rounds)]
            serial = [timed_publish(app, 1, make) for _ in range(args.rounds)]
            images = concurrent[0][1]
            floor = (math.ceil(images / args.concurrency) + 1) * call
            fast = statistics.median(t for t, _ in concurrent)
            slow = statistics.median(t for t, _ in serial)
            print(
                f"{label:<28}{images:>7}{floor:>8.2f}s{fast:>11.2f}s{fast / floor:>8.2f}×{slow:>8.2f}s"
                f"{slow / floor:>8.2f}×"
            )
    fake.stop()


if __name__ == "__main__":
    main()
