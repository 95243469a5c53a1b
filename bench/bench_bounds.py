"""Time and peak memory of the rework diff and of a body's render against body size (docs/api.md §14,
§15, docs/performance.md).

    python bench/bench_bounds.py [--sizes 25000,50000,100000,200000] [--runs 3] [--unbounded]
    python bench/bench_bounds.py --page   (the task page's first and later views)

diff: services.review.changes.text_ops on an ordinary article with 30 paragraphs edited, the same
article rewritten, equal lines plus one character (12,000 lines of "a" is 24,000 characters), and once
"a" * 2000 against "ab" * 1000 (no common block longer than one character: the budget runs out).
render: services.rendering.render_preview of an ordinary article, n "[", n/2 "*[", and a table of
n/40 columns, cold (first view) and warm (remembered). Times are the best of --runs; peak memory is
tracemalloc's, in a separate run. --unbounded also times what the tree did before: difflib's
SequenceMatcher over lines and then characters without a budget, and markdown-it without the bounded
label walk, parsing the body twice (for its images, then to render it), on sizes it finishes in
reasonable time.
"""

import argparse
import random
import sys
import time
import tracemalloc
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_render import build_article
from services.rendering import render_article, render_preview, renderer
from services.review.changes import text_ops

UNBOUNDED_PARSER = renderer._build_parser(bounded=False)


def unbounded_ops(before, after):
    """The diff before it was bounded (docs/api.md §15): lines, then characters of changed blocks under 4M pairs."""
    lines_a, lines_b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    count = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, lines_a, lines_b, autojunk=False).get_opcodes():
        old, new = "".join(lines_a[i1:i2]), "".join(lines_b[j1:j2])
        if tag != "equal" and len(old) * len(new) <= 4_000_000:
            count += len(SequenceMatcher(None, old, new, autojunk=False).get_opcodes())
    return count


def unbounded_render(markdown):
    UNBOUNDED_PARSER.parse(markdown)  # image_urls, then render_article: two parses
    return render_article(markdown)


def edited(article, count, seed=1):
    lines = article.splitlines(keepends=True)
    rnd = random.Random(seed)
    for index in rnd.sample(range(len(lines)), min(count, len(lines))):
        middle = len(lines[index]) // 2
        lines[index] = lines[index][:middle] + "改动了一些文字" + lines[index][middle:]
    return "".join(lines)


def diff_cases(size):
    article = build_article(size)
    return {
        "article, 30 edits": (article, edited(article, 30)),
        "article rewritten": (article, build_article(size * 3 // 4).replace("的", "地")),
        "equal lines + 1": ("a\n" * (size // 2), "a\n" * (size // 2) + "x"),
    }


# Under DIFF_CHAR_PAIRS (2,000 x 2,000), yet 2,000 one-character blocks: the budget runs out.
NO_LONG_BLOCK = ("a*2000 vs (ab)*1000", "a" * 2000, "ab" * 1000)


def table(size):
    columns = max(2, size // 40)
    rows = max(1, size // (2 * columns) - 2)
    return "|" + "a|" * columns + "\n|" + "-|" * columns + "\n" + ("|" + "b|" * columns + "\n") * rows


def render_cases(size):
    return {
        "ordinary article": build_article(size),
        '"["': "[" * size,
        '"*["': "*[" * (size // 2),
        "wide table": table(size),
    }


def best(call, runs):
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def peak_mib(call):
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


_fresh = iter(range(10**9))


def fresh(markdown):
    """The same body, new to the preview cache (a comment line at the end)."""
    return f"{markdown}\n\n<!-- {next(_fresh)} -->\n"


def no_images(urls):
    return {}


def page_views(runs):
    """GET /review/<id> in process, first and later views, of a task with five bodies of 199,990 "[", five
    ordinary 199,990-character articles, and two short bodies (docs/api.md §14 "Long bodies on request")."""
    import tempfile

    from app import create_app
    from models import db
    from services.auth import save_admin

    folder = Path(tempfile.mkdtemp(prefix="bench-bounds-"))
    app = create_app(
        {
            "REVIEW_INSTANCE_PATH": str(folder / "i"),
            "REVIEW_UPLOADS_PATH": str(folder / "u"),
            "REVIEW_AGENT_TOKEN": "bench-agent-token",
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_EDITIONS_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
            "WECHAT_COMMENTS_ENABLED": False,
            "REVIEW_DEFAULT_LANGUAGE": "en",
        },
        serve=True,
    )
    with db.connection_context():
        save_admin("bench", "bench password 123", "review,feedback")
    client = app.test_client()
    client.post("/api/auth/login", data={"username": "bench", "password": "bench password 123"})
    agent = {"x-review-agent-token": "bench-agent-token"}
    cases = {
        "five bodies of [": ["[" * 199_990 + str(n) for n in range(5)],
        "five ordinary articles": [build_article(199_990)[: 199_990 - n] for n in range(5)],
        "two short bodies": ["# short\n\nbody " + str(n) for n in range(2)],
    }
    print(f"{'task page':24} {'first view ms':>14} {'later view ms':>14}")
    for name, bodies in cases.items():
        payload = {
            "publicAccount": "silicon-rise",
            "topic": name,
            "contentType": "article",
            "candidates": {
                "titles": ["bench"],
                "summaries": ["bench"],
                "bodyOptions": [
                    {"id": f"o{n}", "outline": "a|b", "focuses": ["x"], "content": body}
                    for n, body in enumerate(bodies)
                ],
            },
        }
        task = client.post("/api/review/agent/tasks", json=payload, headers=agent).get_json()
        assert "id" in task, task
        start = time.perf_counter()
        assert client.get(f"/review/{task['id']}").status_code == 200
        first = time.perf_counter() - start
        later = best(lambda t=task: client.get(f"/review/{t['id']}"), runs)
        print(f"{name:24} {first * 1000:>14.1f} {later * 1000:>14.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25000,50000,100000,200000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--unbounded", action="store_true")
    parser.add_argument("--page", action="store_true", help="only the task page's first and later views")
    args = parser.parse_args()
    if args.page:
        page_views(args.runs)
        return
    sizes = [int(size) for size in args.sizes.split(",")]

    extra = f" {'unbounded ms':>13}" if args.unbounded else ""
    print(f"{'diff':20} {'chars':>8} {'ms':>9} {'peak MiB':>9} {'result':>14}{extra}")
    rows = [(name, before, after) for size in sizes for name, (before, after) in diff_cases(size).items()]
    for name, before, after in [*rows, NO_LONG_BLOCK]:
        ops = text_ops(before, after)
        seconds = best(lambda b=before, a=after: text_ops(b, a), args.runs)
        memory = peak_mib(lambda b=before, a=after: text_ops(b, a))
        result = "too large" if ops is None else f"{len(ops)} ops"
        line = f"{name:20} {len(before):>8} {seconds * 1000:>9.1f} {memory:>9.1f} {result:>14}"
        if args.unbounded:
            slow = name == "equal lines + 1" and len(before) > 30000
            spent = "(skipped)" if slow else f"{best(lambda b=before, a=after: unbounded_ops(b, a), 1) * 1000:.1f}"
            line += f" {spent:>13}"
        print(line, flush=True)

    print()
    print(f"{'render':20} {'chars':>8} {'cold ms':>9} {'warm ms':>9} {'peak MiB':>9} {'html chars':>11}{extra}")
    for size in sizes:
        for name, markdown in render_cases(size).items():
            html = render_preview(fresh(markdown), None, None, no_images)
            cold = best(lambda m=markdown: render_preview(fresh(m), None, None, no_images), args.runs)
            kept = fresh(markdown)
            render_preview(kept, None, None, no_images)
            warm = best(lambda k=kept: render_preview(k, None, None, no_images), args.runs)
            memory = peak_mib(lambda m=markdown: render_preview(fresh(m), None, None, no_images))
            line = (
                f"{name:20} {len(markdown):>8} {cold * 1000:>9.1f} {warm * 1000:>9.3f} {memory:>9.1f} {len(html):>11}"
            )
            if args.unbounded:
                line += f" {best(lambda m=markdown: unbounded_render(m), 1) * 1000:>13.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
