"""Start the benchmark server, drive load over keep-alive connections, summarise latencies."""

import atexit
import http.client
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def work_folder(prefix):
    """A new temporary folder for the prepared database and uploads, removed when the script exits
    (a 100,000-row database is ~0.5 GB; the scripts used to leave theirs behind)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, work, True)
    return work


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """bench/server.py in its own process, so its memory and CPU are its own."""

    def __init__(self, instance, uploads, *mode, database_url=""):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "server.py"), str(instance), str(uploads), str(self.port), *mode],
            cwd=ROOT,
            env={**os.environ, "BENCH_DATABASE_URL": database_url},
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("benchmark server did not start")

    def rss_mb(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def open_files(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def drive(port, make_request, connections=8, duration=5.0, max_requests=None):
    """Run make_request(n) -> (method, path, body, headers) on `connections` threads.

    Returns {"count", "errors", "rps", "p50", "p95", "p99"} with latencies in milliseconds;
    an error is a transport failure or any 5xx, or a status the scenario did not expect.
    """
    latencies, errors, statuses = [], [], {}
    lock = threading.Lock()
    counter = itertools.count()
    stop_at = time.perf_counter() + duration

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop_at:
            n = next(counter)
            if max_requests is not None and n >= max_requests:
                break
            method, path, body, headers, expected = make_request(n)
            started = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                with lock:
                    errors.append(type(exc).__name__)
                continue
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                statuses[status] = statuses.get(status, 0) + 1
                if status >= 500 or (expected and status not in expected):
                    errors.append(status)
        conn.close()

    began = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - began
    return summary(latencies, errors, statuses, took)


def summary(latencies, errors, statuses, took):
    """drive()'s result; `latencies` is kept (not written to the results file) so rounds can be merged."""
    return {
        "count": len(latencies),
        "errors": len(errors),
        "errorSamples": errors[:5],
        "statuses": statuses,
        "rps": len(latencies) / took if took else 0.0,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "seconds": took,
        "latencies": latencies,
        "errorList": errors,
    }


def merged(results):
    """One result from several drive() results (rounds of the same scenario)."""
    statuses = {}
    for result in results:
        for status, count in result["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    return summary(
        [ms for r in results for ms in r["latencies"]],
        [e for r in results for e in r["errorList"]],
        statuses,
        sum(r["seconds"] for r in results),
    )


def public(result):
    """A result without its raw latency list, for printing and the results file."""
    return {key: value for key, value in result.items() if key not in ("latencies", "errorList")}


def json_request(method, path, payload=None, headers=None, expected=(200,)):
    body = json.dumps(payload, ensure_ascii=False).encode() if payload is not None else None
    all_headers = {"content-type": "application/json"} if body is not None else {}
    all_headers.update(headers or {})
    return method, path, body, all_headers, expected


def login_cookie(port, username, password):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"username": username, "password": password})
    conn.request("POST", "/api/auth/login", body=body, headers={"content-type": "application/json"})
    response = conn.getresponse()
    response.read()
    cookies = [value for name, value in response.getheaders() if name.lower() == "set-cookie"]
    cookie = next((c for c in cookies if c.startswith("review_admin_session=")), "")
    if response.status != 303 or not cookie:
        raise RuntimeError(f"benchmark login failed: {response.status} {response.getheader('Location')}")
    return cookie.split(";", 1)[0]
