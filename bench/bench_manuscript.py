"""The package's manuscript rewrite (services/export/manuscript.py) on bodies up to the 200,000-character
limit, against one plain markdown-it parse of the same text in the same run.

    python bench/bench_manuscript.py [--runs 3]

The rewrite parses each body with five Markdown readers twice (which lines are code for all of them;
what any of them would still load), so about 10 parses is its floor; the ratio says how far above
that the escaping itself goes. Bodies: a realistic article, and three made to stress the span
lookups (code spans, links and tags on every few characters), which took up to 42 s before they
were looked up by bisection, plus two that made the rewrite backtrack (quadratic, exponential).
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markdown_it import MarkdownIt

from services.export.manuscript import rewrite_images

LIMIT = 200_000
BODIES = {
    "article": ("## 小节\n\n" + "半导体产业正在经历新的变化，`code` 与 a<b 的比较。" * 20 + "\n\n![图](/u/a.png)\n\n")
    * 300,
    "code spans and tags": "`a` <b " * 28_000,
    "links and tags": "[a](b) <c " * 20_000,
    "link definitions": "[a]: b\n" * 28_000,
    # Unclosed backtick runs of growing length: each scanned to the end of the body (quadratic)
    # until code spans were found in one pass over the runs.
    "backtick runs": "".join("`" * k + "a" for k in range(1, 620)),
    # Deep quotes that are no link definition: 2^depth steps before the quote prefix was possessive.
    "deep quotes": ("> " * 40 + "x\n\n") * 2_400,
}


def best(runs, work):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs per body")
    args = parser.parse_args(argv)
    plain = MarkdownIt("commonmark")
    print(f"{'body':22} {'chars':>8} {'one parse':>10} {'rewrite':>9} {'ratio':>6}")
    for name, body in BODIES.items():
        body = body[:LIMIT]
        parse = best(args.runs, lambda body=body: plain.parse(body))
        rewrite = best(args.runs, lambda body=body: rewrite_images(body, {"/u/a.png": "images/a.png"}))
        print(f"{name:22} {len(body):8,} {parse:9.3f}s {rewrite:8.3f}s {rewrite / parse:5.1f}x", flush=True)


if __name__ == "__main__":
    main()
