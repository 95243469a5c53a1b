"""Time to check a backup manifest's shape against its size (docs/api.md §16, docs/performance.md): the
strings are skipped before the brackets are counted, so a crafted manifest is refused before json.loads.

    python bench/bench_manifest.py [--sizes 20000,40000,80000,4000000] [--runs 3]

Cases of n bytes: `{` then n/2 `\\"` (an unterminated string of escapes: what made the old pattern
quadratic), and a well-formed list of empty strings `["","",…]`. The baseline is the pattern the tree
used before (re.sub of `"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"`, tried from every quote), timed on the sizes it
finishes in reasonable time (up to 160 KB).
"""

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.operations.archive import RestoreRefused, _outside_strings

OLD_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
OLD_LIMIT = 160_000  # bytes: beyond, the old pattern takes minutes


def cases(size):
    return {"unterminated escapes": b"{" + b'\\"' * (size // 2), "many strings": b"[" + b'"",' * (size // 3) + b"]"}


def best(work, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        try:
            work()
        except RestoreRefused:
            pass
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,40000,80000,4000000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'case':<22}{'bytes':>10}{'now ms':>10}{'before ms':>12}")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, data in cases(size).items():
            now = best(lambda data=data: _outside_strings(data), args.runs)
            before = best(lambda data=data: OLD_STRING.sub(b"", data), 1) if len(data) <= OLD_LIMIT else None
            shown = f"{before * 1000:12.0f}" if before is not None else f"{'(skipped)':>12}"
            print(f"{name:<22}{len(data):>10}{now * 1000:10.1f}{shown}")


if __name__ == "__main__":
    main()
