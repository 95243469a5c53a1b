"""One command for the service benchmarks (issue 9): python bench/run.py [--rows 100000] [--seconds 5]

Starts the service on a prepared database in its own process and measures, in the same run, a bare
Flask endpoint on the same server as the baseline. Prints throughput ratios and latencies against
the targets, and writes bench/results/latest.json.

Each throughput ratio is measured in alternating rounds (bare endpoint, then the scenario, `--rounds`
times) and is the median of the rounds' ratios: on a shared machine the capacity drifts by ±15 %
within a minute, which a single bare run at the start would carry into every ratio.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scenarios
from bench.common import Server, drive, merged, public, work_folder
from bench.seed import seed

# The floors users feel (docs/performance.md): latencies at one connection.
TARGETS = [
    # (label, measured key, kind, goal)
    ("task detail p50 at one connection (ms)", "task_detail_one", "p50", 15),
    ("list 50 of N tasks p50 (ms)", "list_tasks", "p50", 40),
    ("feedback keyword page p50 (ms)", "feedback_keyword", "p50", 50),
]
# Throughput against the bare endpoint: reported, no longer a goal (a small team sends tens of
# requests a minute).
RATIO_KEYS = {"create_task", "task_detail", "create_feedback"}


def in_rounds(port, bare_request, make_request, connections, seconds, rounds, bare_rounds):
    """`rounds` alternations of bare endpoint and scenario; (merged result, ratio of each round).

    The bare rounds are appended to `bare_rounds`."""
    results, ratios, window = [], [], seconds / rounds
    for number in range(rounds):
        bare_rounds.append(drive(port, bare_request, connections, window))
        # Each round numbers its requests afresh: offset them so no payload is sent twice.
        results.append(drive(port, lambda n, skip=number * 10_000_000: make_request(n + skip), connections, window))
        ratios.append(results[-1]["rps"] / bare_rounds[-1]["rps"])
    return merged(results), ratios


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="tasks and feedback rows to prepare")
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each throughput scenario")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of bare endpoint and scenario per ratio")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument(
        "--mixed-seconds",
        type=float,
        default=30.0,
        help="mixed load before reading the server's RSS (600 for the 10-minute figure)",
    )
    args = parser.parse_args(argv)

    work = work_folder("review-bench-")
    started = time.perf_counter()
    ids = seed(work / "instance", work / "uploads", args.rows)
    print(f"prepared {args.rows:,} tasks and {args.rows:,} feedback rows in {time.perf_counter() - started:.1f} s")
    server = Server(work / "instance", work / "uploads")
    results, ratios = {}, {}
    try:
        plan = scenarios.build(server.port, ids)
        bare_rounds = []
        for name, (make_request, connections) in plan.items():
            connections = connections or args.connections
            if name in RATIO_KEYS:
                results[name], ratios[name] = in_rounds(
                    server.port, plan["bare"][0], make_request, connections, args.seconds, args.rounds, bare_rounds
                )
            elif name != "bare":
                results[name] = drive(server.port, make_request, connections, args.seconds)
        results = {"bare": merged(bare_rounds), **results}
        results["mixed"] = drive(server.port, scenarios.mixed(plan), args.connections, args.mixed_seconds)
        results["rss_mb"] = server.rss_mb()
    finally:
        server.stop()

    results = {name: public(r) if isinstance(r, dict) else r for name, r in results.items()}
    ratio = {name: statistics.median(values) for name, values in ratios.items()}
    base = results["bare"]["rps"]
    print(
        f"\nbaseline bare endpoint: {base:,.0f} req/s, p50 {results['bare']['p50']:.2f} ms "
        f"(all {len(bare_rounds)} rounds together)"
    )
    print(f"{'scenario':34} {'req/s':>9} {'ratio':>6} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}  ratio per round")
    for name, result in results.items():
        if isinstance(result, dict):
            rounds = " ".join(f"{r:.2f}" for r in ratios.get(name, []))
            print(
                f"{name:34} {result['rps']:9,.0f} {ratio.get(name, result['rps'] / base):6.2f} "
                f"{result['p50']:8.2f} {result['p99']:8.2f} {result['errors']:6d}  {rounds}"
            )
    print(f"\nserver RSS after {args.mixed_seconds:.0f} s of mixed load: {results['rss_mb']:.0f} MB (goal <= 150 MB)")
    print(
        "\nthroughput against the bare endpoint (median of the rounds; reported, not a goal): "
        + ", ".join(f"{name} {ratio[name]:.2f}" for name in sorted(ratio))
    )
    print("\ntargets:")
    failed = 0
    for label, key, kind, goal in TARGETS:
        value = results[key][kind]
        ok = value <= goal
        failed += not ok
        print(f"  {'ok  ' if ok else 'MISS'} {label}: {value:.2f} (goal <= {goal})")
    errors = sum(r["errors"] for r in results.values() if isinstance(r, dict))
    print(f"  {'ok  ' if errors == 0 else 'MISS'} errors across all scenarios: {errors}")
    results["ratios"] = {name: {"median": ratio[name], "rounds": values} for name, values in ratios.items()}
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps({"rows": args.rows, "results": results}, indent=2))
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
