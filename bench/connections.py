"""The connection envelope (docs/api.md §11): the worst /healthz latency while N connections sit idle,
and while N connections send their headers one byte a second, for N = 100, 500, 1,000, 2,000:

    python bench/connections.py [--counts 100,500,1000,2000] [--probes 20]

The service runs as deployed (`python app.py`, waitress) in its own process on a temporary folder;
each row also times an authenticated API call (the agent's task list). Baseline: no extra connections.
"""

import argparse
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import free_port, work_folder

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-connections-token-0123456789"


def start(work):
    port = free_port()
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(work / "instance"),
        "REVIEW_UPLOADS_PATH": str(work / "uploads"),
        "PORT": str(port),
        "REVIEW_AGENT_TOKEN": TOKEN,
        "CONNECTION_IDLE_SECONDS": "120",
    }
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if requests.get(f"{base}/healthz", timeout=2).ok:
                return server, base, port
        except requests.RequestException:
            time.sleep(0.1)
    raise SystemExit("the service did not start")


def worst(base, probes):
    """(worst /healthz, worst API call) in ms over `probes` fresh connections each."""
    health, api = [], []
    for _ in range(probes):
        for url, headers, into in (
            (f"{base}/healthz", {}, health),
            (f"{base}/api/review/agent/tasks", {"x-review-agent-token": TOKEN}, api),
        ):
            started = time.perf_counter()
            try:
                requests.get(url, headers=headers, timeout=30).raise_for_status()
                into.append((time.perf_counter() - started) * 1000)
            except requests.RequestException:
                into.append(float("inf"))
        time.sleep(0.05)
    return max(health), max(api)


def connect(port, count):
    return [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(count)]


def slow_senders(sockets, stop):
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100000
    for offset in range(len(request)):
        if stop.wait(1):
            return
        for sock in sockets:
            try:
                sock.send(request[offset : offset + 1])
            except OSError:
                pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="100,500,1000,2000")
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.counts.split(",")]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max(counts) + 256
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    server, base, port = start(work_folder("bench-connections-"))
    try:
        health, api = worst(base, args.probes)
        print(f"worst of {args.probes} probes, ms          /healthz   API call")
        print(f"{'no extra connections':<36}{health:>9.1f}{api:>11.1f}")
        for count in counts:
            idle = connect(port, count)
            time.sleep(0.5)
            health, api = worst(base, args.probes)
            print(f"{f'{count} idle connections':<36}{health:>9.1f}{api:>11.1f}")
            for sock in idle:
                sock.close()
            slow = connect(port, count)
            stop = threading.Event()
            sender = threading.Thread(target=slow_senders, args=(slow, stop), daemon=True)
            sender.start()
            time.sleep(2)
            health, api = worst(base, args.probes)
            print(f"{f'{count} slow (1 byte/s) connections':<36}{health:>9.1f}{api:>11.1f}")
            stop.set()
            sender.join(5)
            for sock in slow:
                sock.close()
            time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
