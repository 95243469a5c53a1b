"""Package export of a task with 20 images of about 1 MB, against plain zipfile in the same run.

    python bench/bench_package.py [--runs 9]

Cases (each built the way the route builds it, temporary directory removed after every run):
  image_post   20 noise images (PNG and JPEG alternately, ~1 MB each, incompressible)
  article      cover + 19 body images linked in the Markdown, same files
  http         the image_post package downloaded through the route, read in chunks
baseline: zipfile writing the same 20 files (stored) and a manuscript, no checks at all.
Runs alternate with the baseline so both see the same machine; the ratio is the median of the
per-pair ratios. Memory: peak RSS growth of one build (VmHWM after resetting it through
/proc/self/clear_refs) in a fresh process and in the warm benchmark process, and the tracemalloc
peak of Python allocations. Goal: <= 1 s, <= 50 MB.
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image

from app import create_app
from models import ReviewTask, db
from rules.ids import new_id, now_iso
from services.assets import save_upload
from services.export import build_package

IMAGES = 20
GOAL_SECONDS, GOAL_MB = 1.0, 50


def noise_image(index):
    """~1 MB of random pixels: PNG for even indexes, JPEG (quality 95) for odd ones."""
    out = io.BytesIO()
    if index % 2 == 0:
        Image.frombytes("RGB", (580, 580), os.urandom(580 * 580 * 3)).save(out, "PNG")
    else:
        Image.frombytes("RGB", (900, 900), os.urandom(900 * 900 * 3)).save(out, "JPEG", quality=95)
    return out.getvalue()


def seed(app):
    uploads = app.config["REVIEW_UPLOADS_PATH"]
    assets = [
        save_upload(noise_image(i), scope="review", file_name=f"n{i}", uploads_root=uploads)[0] for i in range(IMAGES)
    ]
    now = now_iso()
    common = {
        "public_account": "silicon-rise",
        "status": "approved",
        "candidates": {"titles": ["t"]},
        "version": 1,
        "created_at": now,
        "updated_at": now,
    }
    post = ReviewTask.create(
        task_id=new_id(),
        content_type="image_post",
        topic="bench post",
        selections={
            "title": "Bench",
            "description": "Twenty images",
            "images": [{"assetId": a.asset_id} for a in assets],
        },
        **common,
    )
    body = "\n\n".join(f"Paragraph {n}\n\n![image {n}]({a.url})" for n, a in enumerate(assets[1:], 1))
    article = ReviewTask.create(
        task_id=new_id(),
        content_type="article",
        topic="bench article",
        selections={"title": "Bench", "summary": "s", "body": body, "coverImage": assets[0].url},
        body_draft={
            "markdown": body,
            "sourceBodyCandidateId": "b",
            "sourceBodyCandidate": body,
            "bodyEditedFromCandidate": False,
        },
        **common,
    )
    files = [os.path.join(uploads, "review", a.stored_name) for a in assets]
    return post.task_id, article.task_id, files


def build(app, task_id):
    with db.connection_context():
        package = build_package(task_id, app.extensions["settings"])
    size = os.path.getsize(package.path)
    package.cleanup()
    return size


def baseline(app, files):
    handle, path = tempfile.mkstemp(dir=app.config["REVIEW_INSTANCE_PATH"])
    os.close(handle)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("manuscript.md", "# Bench\n")
        for index, file in enumerate(files):
            archive.write(file, f"images/{index:02d}{Path(file).suffix}")
    size = os.path.getsize(path)
    os.unlink(path)
    return size


def download(client, task_id):
    response = client.get(f"/api/review/tasks/{task_id}/package", buffered=False)
    size = sum(len(chunk) for chunk in response.response)
    response.close()
    assert response.status_code == 200
    return size


def timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def peak_rss_growth_mb(fn, *args):
    """Peak resident memory added while fn runs (Linux: VmHWM reset through clear_refs)."""

    def status(key):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
        return float("nan")

    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return float("nan")
    before = status("VmRSS")
    fn(*args)
    return status("VmHWM") - before


def memory_child(base, task_id):
    """In a fresh process: peak RSS growth of one cold build (app created and imports done first)."""
    app = create_app(
        {
            "REVIEW_INSTANCE_PATH": f"{base}/instance",
            "REVIEW_UPLOADS_PATH": f"{base}/uploads",
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "TESTING": True,
        },
        serve=True,
    )
    Image.init()
    print(f"{peak_rss_growth_mb(build, app, task_id):.1f}")


def cold_rss_growth_mb(base, task_id):
    out = subprocess.run(
        [sys.executable, __file__, "--memory-child", base, task_id], check=True, capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--memory-child", nargs=2, metavar=("BASE", "TASK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        return memory_child(*args.memory_child)
    with tempfile.TemporaryDirectory() as base:
        app = create_app(
            {
                "REVIEW_INSTANCE_PATH": f"{base}/instance",
                "REVIEW_UPLOADS_PATH": f"{base}/uploads",
                "WEBHOOK_SENDER_ENABLED": False,
                "TEAM_MESSAGES_ENABLED": False,
                "CHAT_CARDS_ENABLED": False,
                "TESTING": True,
            },
            serve=True,
        )
        from services.auth import save_admin

        with db.connection_context():
            save_admin("bench", "bench-password-123", "review")
            post_id, article_id, files = seed(app)
        client = app.test_client()
        client.post("/api/auth/login", data={"username": "bench", "password": "bench-password-123"})
        total_mb = sum(os.path.getsize(f) for f in files) / 1e6
        print(f"{IMAGES} images, {total_mb:.1f} MB in total; {args.runs} runs per case\n")
        cases = {
            "image_post": lambda: build(app, post_id),
            "article": lambda: build(app, article_id),
            "http": lambda: download(client, post_id),
        }
        for fn in cases.values():  # warm-up: imports, page cache
            fn()
        baseline(app, files)
        print(f"{'case':<12}{'p50 s':>9}{'baseline p50 s':>16}{'ratio':>8}{'goal':>8}")
        for name, fn in cases.items():
            own, base_times, ratios = [], [], []
            for _ in range(args.runs):
                own.append(timed(fn))
                base_times.append(timed(baseline, app, files))
                ratios.append(own[-1] / base_times[-1])
            p50 = statistics.median(own)
            verdict = "ok" if p50 <= GOAL_SECONDS else "MISSED"
            print(
                f"{name:<12}{p50:>9.3f}{statistics.median(base_times):>16.3f}"
                f"{statistics.median(ratios):>7.1f}x{verdict:>8}"
            )
        warm_rss = peak_rss_growth_mb(cases["image_post"])
        rss = cold_rss_growth_mb(base, post_id)
        tracemalloc.start()
        cases["image_post"]()
        python_peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        verdict = "ok" if rss <= GOAL_MB else "MISSED"
        print(
            f"\nmemory of one image_post build: peak RSS +{rss:.1f} MB in a fresh process "
            f"(+{warm_rss:.1f} MB when warm), Python allocations peak {python_peak:.1f} MB "
            f"(goal <= {GOAL_MB} MB: {verdict})"
        )


if __name__ == "__main__":
    main()
