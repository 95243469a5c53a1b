"""Where a ratio scenario's time goes when served: server CPU and context switches per request, and
the client's own CPU (is the load generator the bottleneck?).

    python bench/cost.py [--rows 2000] [--seconds 4] [--rounds 2]

Each ratio scenario runs against the same server as bench/run.py (8 connections), alternating with
the bare endpoint. Server CPU comes from /proc/<pid>/stat, context switches from every thread's
/proc/<pid>/task/*/status, the client's CPU from this process. On 2 vCPU the server sits at one
core (the GIL) while the client uses a fifth to a third of the other: the ratios measure the server.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scenarios
from bench.common import Server, drive, work_folder
from bench.seed import seed

TICK = os.sysconf("SC_CLK_TCK")
SCENARIOS = ("task_detail", "create_task", "create_feedback")


def server_cpu(pid):
    """User + system CPU seconds of the process (all threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def context_switches(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            lines = Path(f"/proc/{pid}/task/{task}/status").read_text().splitlines()
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
        total += sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)
    return total


def measure(server, make_request, seconds):
    pid = server.proc.pid
    before = (time.process_time(), server_cpu(pid), context_switches(pid), time.perf_counter())
    result = drive(server.port, make_request, 8, seconds)
    after = (time.process_time(), server_cpu(pid), context_switches(pid), time.perf_counter())
    count, wall = max(1, result["count"]), after[3] - before[3]
    return {
        "rps": result["rps"],
        "client_ms": 1000 * (after[0] - before[0]) / count,
        "client_core": (after[0] - before[0]) / wall,
        "server_ms": 1000 * (after[1] - before[1]) / count,
        "server_core": (after[1] - before[1]) / wall,
        "switches": (after[2] - before[2]) / count,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    work = work_folder("review-cost-")
    ids = seed(work / "instance", work / "uploads", args.rows)
    server = Server(work / "instance", work / "uploads")
    try:
        plan = scenarios.build(server.port, ids)
        print(
            f"{'scenario':16} {'req/s':>7} {'server ms/req':>14} {'server core':>12} {'switches/req':>13} "
            f"{'client ms/req':>14} {'client core':>12}"
        )
        for _ in range(args.rounds):
            for name in SCENARIOS:
                for label in ("bare", name):
                    m = measure(server, plan[label][0], args.seconds)
                    print(
                        f"{label:16} {m['rps']:7.0f} {m['server_ms']:14.3f} {m['server_core']:12.0%} "
                        f"{m['switches']:13.1f} {m['client_ms']:14.3f} {m['client_core']:12.0%}",
                        flush=True,
                    )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
