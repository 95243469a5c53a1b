"""Load test and soak test of the service (issue 9, item 4), one command each:

    python bench/load.py [--seconds 60] [--connections 16] [--rows 20000]
    python bench/load.py --soak [--seconds 600] [--connections 16] [--rate N]
    python bench/load.py --processes 2 [--database postgresql://user@host/empty_db]

`--processes N` starts N service processes on the one database (the instance's SQLite file, or the
empty PostgreSQL database `--database` names) and spreads the connections over them.

Both start the service (bench/server.py: waitress, 8 threads) on a prepared database (bench/seed.py)
in its own process and send a mixed workload of reads and writes over keep-alive connections:
task creation, element PATCH, task deletion, feedback creation and status, image upload, task
detail, lists, feedback keyword page, asset list and the package ZIP. Every few seconds the server's
resident memory, open file descriptors and WAL file size are sampled.

Load test: as fast as `--connections` clients can go for `--seconds`.
  criteria: 0 errors; p99 latency of the writes <= 200 ms.
Soak test: first a short run at full speed measures capacity, then `--seconds` at half of it (or
`--rate` requests per second), paced by a shared scheduler.
  criteria: 0 errors; memory flat (median RSS of the last fifth within 10 % + 8 MiB of the median
  after warm-up); open files flat (no higher at the end than after warm-up, + 2); WAL file bounded
  (<= 64 MiB, journal_size_limit); no temporary files left (package directories, .upload-*
  files in uploads/, our prefixes in the system temp folder).

Prints one PASS/FAIL line per criterion, exits 1 when one fails, and writes bench/results/load.json
or soak.json. An error is a transport failure, any 5xx, or a status the request did not expect.
"""

import argparse
import collections
import http.client
import itertools
import json
import random
import statistics
import struct
import sys
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Server, login_cookie, percentile, work_folder
from bench.settings import ADMIN, AGENT_TOKEN, CLIENT_TOKEN

WRITE_P99_GOAL_MS = 200
WAL_LIMIT_BYTES = 64 * 1024 * 1024
TEMP_PREFIXES = (".upload-", "package-")
WRITES = ("create_task", "patch_task", "delete_task", "create_feedback", "feedback_status", "upload")
# One cycle of the mix: 13 reads and 11 writes (weights by repetition).
MIX = [
    "task_detail",
    "create_task",
    "list_tasks",
    "create_feedback",
    "task_detail",
    "patch_task",
    "feedback_page",
    "upload",
    "agent_list",
    "create_task",
    "task_detail",
    "feedback_status",
    "feedback_detail",
    "delete_task",
    "asset_list",
    "create_feedback",
    "package",
    "patch_task",
    "task_detail",
    "create_task",
    "list_tasks",
    "feedback_page",
    "upload",
    "task_detail",
]


# ---- requests ------------------------------------------------------------------------------------
def _png(text):
    """A 1x1 PNG made unique by a text chunk (the service keeps one asset per distinct file)."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"tEXt", b"Comment\0" + text.encode())
        + chunk(b"IDAT", zlib.compress(b"\0\x10\x80\xf0"))
        + chunk(b"IEND", b"")
    )


def _multipart(file_name, data, content_type="image/png"):
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def task_payload(n, tag):
    return {
        "publicAccount": ("silicon-rise", "carbon-fitness")[n % 2],
        "topic": f"负载测试 {tag} {n}",
        "contentType": "article",
        "candidates": {
            "titles": [f"芯片的下一个十年 {n}", "摩尔定律之后"],
            "summaries": ["从制程到封装，一次看懂。"],
            "bodyOptions": [
                {
                    "id": "b1",
                    "outline": "背景|现状|展望",
                    "focuses": ["先进封装"],
                    "content": "# 背景\n\n" + "半导体产业正在经历新的变化。" * 40,
                }
            ],
        },
    }


def feedback_payload(n, tag):
    return {
        "type": "bug",
        "title": f"负载反馈 {tag} {n}",
        "content": f"第 {n} 次：打开首页后闪退",
        "appName": "fitness-app",
        "appVersion": f"2.{n % 7}.0",
        "platform": ("ios", "android", "web")[n % 3],
        "deviceId": f"load-{tag}-{n % 500}",
    }


class Workload:
    """Builds the n-th request of the mix; remembers the tasks it created (to PATCH and to DELETE)."""

    def __init__(self, port, rows, keyword="闪退"):
        self.tag = uuid.uuid4().hex[:8]
        self.rows = rows
        self.keyword = keyword
        self.cookie = login_cookie(port, *ADMIN)
        self.agent = {"x-review-agent-token": AGENT_TOKEN}
        self.admin = {"cookie": self.cookie}
        self.client = {"x-feedback-client-token": CLIENT_TOKEN}
        self._lock = threading.Lock()
        self._to_patch = collections.deque(maxlen=2000)  # created tasks that stay
        self._to_delete = collections.deque()  # created tasks waiting to be deleted
        self._created = itertools.count()

    def created(self, kind, response_body):
        """Called after a 201 from task creation: half the tasks are kept, half deleted later."""
        if kind != "create_task":
            return
        task_id = json.loads(response_body)["id"]
        with self._lock:
            (self._to_patch if next(self._created) % 2 == 0 else self._to_delete).append(task_id)

    def _seeded_task(self, rng):
        return f"bench{rng.randrange(max(1, self.rows - 1)):07d}"

    def request(self, n, rng):
        """(kind, method, path, body bytes or None, headers, expected statuses)."""
        kind = MIX[n % len(MIX)]
        if kind == "patch_task" or kind == "delete_task":
            with self._lock:
                if kind == "patch_task" and self._to_patch:
                    task_id = self._to_patch[rng.randrange(len(self._to_patch))]
                elif kind == "delete_task" and self._to_delete:
                    task_id = self._to_delete.popleft()
                else:
                    task_id = None
            if task_id is None:
                kind = "create_task"  # nothing created yet
            elif kind == "patch_task":
                return self._json(
                    kind,
                    "PATCH",
                    f"/api/review/agent/tasks/{task_id}/elements",
                    {"title": f"改过的标题 {n}"},
                    self.agent,
                    (200,),
                )
            else:
                return kind, "DELETE", f"/api/review/tasks/{task_id}", None, self.admin, (200,)
        if kind == "create_task":
            return self._json(kind, "POST", "/api/review/agent/tasks", task_payload(n, self.tag), self.agent, (201,))
        if kind == "create_feedback":
            return self._json(kind, "POST", "/api/feedbacks", feedback_payload(n, self.tag), self.client, (201,))
        if kind == "feedback_status":
            status = ("processing", "processed", "unprocessed")[n % 3]
            return self._json(
                kind,
                "PATCH",
                f"/api/feedbacks/fb{rng.randrange(max(1, self.rows - 1)):07d}/status",
                {"status": status, "adminNote": f"note {n}"},
                self.admin,
                (200,),
            )
        if kind == "upload":
            body, content_type = _multipart(f"load-{n}.png", _png(f"{self.tag}-{n}"))
            return kind, "POST", "/api/assets/upload", body, {**self.agent, "content-type": content_type}, (201,)
        paths = {
            "task_detail": f"/api/review/tasks/{self._seeded_task(rng)}",
            "list_tasks": "/api/review/tasks?status=all&limit=50",
            "agent_list": "/api/review/agent/tasks?status=pending_review&limit=20",
            "feedback_page": f"/api/feedbacks?keyword={_quote(self.keyword)}&pageSize=20",
            "feedback_detail": f"/api/feedbacks/fb{rng.randrange(max(1, self.rows - 1)):07d}",
            "asset_list": "/api/assets?scope=review&pageSize=20",
            "package": f"/api/review/tasks/{self._seeded_task(rng)}/package",
        }
        headers = self.agent if kind in ("agent_list", "asset_list") else self.admin
        return kind, "GET", paths[kind], None, headers, (200,)

    @staticmethod
    def _json(kind, method, path, payload, headers, expected):
        body = json.dumps(payload, ensure_ascii=False).encode()
        return kind, method, path, body, {**headers, "content-type": "application/json"}, expected


def _quote(text):
    from urllib.parse import quote

    return quote(text)


# ---- driving -------------------------------------------------------------------------------------
class Pacer:
    """Hands out send times `1 / rate` apart to every worker (None: as fast as possible)."""

    def __init__(self, rate):
        self.interval = 1.0 / rate if rate else 0.0
        self._next = time.perf_counter()
        self._lock = threading.Lock()

    def wait(self):
        if not self.interval:
            return
        with self._lock:
            slot = max(self._next, time.perf_counter())
            self._next = slot + self.interval
        delay = slot - time.perf_counter()
        if delay > 0:
            time.sleep(delay)


def drive(ports, workload, connections, seconds, rate=None, seed=1):
    """Run the mix, connection i on ports[i % len(ports)]; {"kinds": {kind: {...}}, "count", "errors",
    "errorSamples", "rps", "seconds"}."""
    stop_at = time.perf_counter() + seconds
    counter = itertools.count()
    pacer = Pacer(rate)
    lock = threading.Lock()
    latencies = collections.defaultdict(list)
    statuses = collections.defaultdict(collections.Counter)
    errors = []

    def worker(number):
        rng = random.Random(seed * 1000 + number)
        port = ports[number % len(ports)]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            pacer.wait()
            if time.perf_counter() >= stop_at:
                break
            n = next(counter)
            kind, method, path, body, headers, expected = workload.request(n, rng)
            started = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                with lock:
                    statuses[kind][type(exc).__name__] += 1
                    errors.append((kind, path, type(exc).__name__))
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if status in expected:
                workload.created(kind, data)
            with lock:
                latencies[kind].append(elapsed)
                statuses[kind][status] += 1
                if status >= 500 or status not in expected:
                    errors.append((kind, path, status, data[:200].decode("utf-8", "replace")))
        conn.close()

    began = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - began
    kinds = {kind: _summary(values, statuses[kind], took) for kind, values in sorted(latencies.items())}
    for kind in statuses:
        kinds.setdefault(kind, _summary([], statuses[kind], took))
    every = [v for values in latencies.values() for v in values]
    writes = [v for kind in WRITES for v in latencies.get(kind, [])]
    return {
        "kinds": kinds,
        "count": len(every),
        "errors": len(errors),
        "errorSamples": errors[:10],
        "rps": len(every) / took if took else 0.0,
        "seconds": took,
        "all": _summary(every, {}, took),
        "writes": _summary(writes, {}, took),
    }


def _summary(values, statuses, took):
    return {
        "count": len(values),
        "rps": len(values) / took if took else 0.0,
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "max": max(values) if values else float("nan"),
        "statuses": {str(k): v for k, v in statuses.items()},
    }


# ---- watching the server -------------------------------------------------------------------------
class Sampler(threading.Thread):
    """Every `every` seconds: server RSS (MiB), open file descriptors, WAL size (bytes)."""

    def __init__(self, server, instance, every=5.0):
        super().__init__(daemon=True)
        self.server, self.wal, self.every = server, Path(instance) / "review.db-wal", every
        self.samples = []
        self.stopping = threading.Event()
        self.began = time.perf_counter()

    def sample(self):
        wal = self.wal.stat().st_size if self.wal.exists() else 0
        self.samples.append(
            {
                "t": round(time.perf_counter() - self.began, 1),
                "rssMb": round(self.server.rss_mb(), 1),
                "fds": self.server.open_files(),
                "walBytes": wal,
            }
        )

    def run(self):
        while not self.stopping.wait(self.every):
            self.sample()

    def stop(self):
        self.stopping.set()
        self.join()
        self.sample()
        return self.samples


def leftover_temp_files(instance, uploads, system_before):
    """Our temporary files still present: package dirs, .upload-* files, new entries in the system temp."""
    found = []
    tmp = Path(instance) / "tmp"
    if tmp.exists():
        found += [str(p) for p in tmp.iterdir()]
    found += [str(p) for p in Path(uploads).rglob(".upload-*")]
    found += sorted(str(Path(tempfile.gettempdir()) / name) for name in system_temp_entries() - system_before)
    return found


def system_temp_entries():
    return {p.name for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(TEMP_PREFIXES)}


# ---- the two commands ----------------------------------------------------------------------------
def prepare(rows, database_url=""):
    from bench.seed import seed

    work = work_folder("review-load-")
    started = time.perf_counter()
    ids = seed(work / "instance", work / "uploads", rows, database_url)
    print(f"prepared {rows:,} tasks and {rows:,} feedback rows in {time.perf_counter() - started:.1f} s ({work})")
    return work, ids


def run_load(ports, rows, connections, seconds, rate=None, keyword="闪退"):
    """The mixed workload against a running server; returns drive()'s result (used by the CI test)."""
    return drive(ports, Workload(ports[0], rows, keyword), connections, seconds, rate)


def print_run(title, result):
    print(
        f"\n{title}: {result['count']:,} requests in {result['seconds']:.1f} s = {result['rps']:,.0f} req/s, "
        f"{result['errors']} errors"
    )
    print(f"  {'kind':16} {'count':>7} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses")
    rows = [*result["kinds"].items(), ("(writes)", result["writes"]), ("(all)", result["all"])]
    for kind, s in rows:
        print(
            f"  {kind:16} {s['count']:7,} {s['rps']:7.1f} {s['p50']:8.1f} {s['p95']:8.1f} {s['p99']:8.1f} "
            f"{s['max']:8.1f}  {s['statuses'] or ''}"
        )
    for sample in result["errorSamples"]:
        print("  error:", sample)


def check(label, ok, detail):
    print(f"  {'PASS' if ok else 'FAIL'}  {label}: {detail}")
    return ok


def flat_memory(samples):
    """(ok, detail): median RSS of the last fifth vs the median after warm-up (20 % .. 40 % of the run)."""
    rss = [s["rssMb"] for s in samples]
    if len(rss) < 5:
        return False, f"only {len(rss)} samples; run longer"
    n = len(rss)
    early = statistics.median(rss[n // 5 : max(n // 5 + 1, 2 * n // 5)])
    late = statistics.median(rss[4 * n // 5 :])
    limit = early * 1.10 + 8
    return late <= limit, f"{early:.0f} MiB after warm-up, {late:.0f} MiB at the end (limit {limit:.0f} MiB)"


def flat_files(samples):
    fds = [s["fds"] for s in samples]
    if len(fds) < 5:
        return False, f"only {len(fds)} samples; run longer"
    n = len(fds)
    early = max(fds[n // 5 : max(n // 5 + 1, 2 * n // 5)])
    late = max(fds[4 * n // 5 :])
    return late <= early + 2, f"{early} after warm-up, {late} at the end (min {min(fds)}, max {max(fds)})"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:2]), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--soak", action="store_true", help="soak test at half capacity instead of the load test")
    parser.add_argument("--seconds", type=float, help="duration (load: 60, soak: 600)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rows", type=int, default=20_000, help="tasks and feedback rows prepared before the run")
    parser.add_argument("--rate", type=float, help="soak: requests per second (default: half the measured capacity)")
    parser.add_argument("--capacity-seconds", type=float, default=20.0, help="soak: length of the capacity run")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between server samples")
    parser.add_argument("--processes", type=int, default=1, help="service processes on the one database")
    parser.add_argument("--database", default="", help="an empty PostgreSQL database (default: SQLite)")
    args = parser.parse_args(argv)
    seconds = args.seconds or (600.0 if args.soak else 60.0)

    work, ids = prepare(args.rows, args.database)
    instance, uploads = work / "instance", work / "uploads"
    system_before = system_temp_entries()
    servers = [Server(instance, uploads, database_url=args.database) for _ in range(args.processes)]
    server, ports = servers[0], [each.port for each in servers]
    sampler = Sampler(server, instance, args.sample_every)
    try:
        rate = args.rate
        if args.soak and rate is None:
            capacity = run_load(ports, args.rows, args.connections, args.capacity_seconds, keyword=ids["keyword"])
            print_run(f"capacity ({args.connections} connections, full speed)", capacity)
            rate = capacity["rps"] / 2
        sampler.sample()
        sampler.start()
        title = (
            f"soak: {seconds:.0f} s at {rate:,.0f} req/s"
            if args.soak
            else f"load: {seconds:.0f} s, {args.connections} connections"
        )
        title += f", {args.processes} process{'es' if args.processes > 1 else ''} on " + (
            "PostgreSQL" if args.database else "SQLite"
        )
        result = run_load(
            ports, args.rows, args.connections, seconds, rate=rate if args.soak else None, keyword=ids["keyword"]
        )
        time.sleep(1.0)  # responses still streaming (packages) finish and clean up
        samples = sampler.stop()
        leftovers = leftover_temp_files(instance, uploads, system_before)
    finally:
        sampler.stopping.set()
        for each in servers:
            each.stop()
    print_run(title, result)
    rss, fds, wal = ([s[k] for s in samples] for k in ("rssMb", "fds", "walBytes"))
    print(
        f"\nserver samples every {args.sample_every:g} s: RSS {min(rss):.0f}..{max(rss):.0f} MiB, "
        f"open files {min(fds)}..{max(fds)}, WAL {min(wal) / 2**20:.1f}..{max(wal) / 2**20:.1f} MiB"
    )
    print("\ncriteria:")
    ok = check("errors", result["errors"] == 0, f"{result['errors']} of {result['count']:,} requests")
    if args.soak:
        ok &= check("memory flat", *flat_memory(samples))
        ok &= check("open files flat", *flat_files(samples))
        ok &= check(
            "WAL bounded",
            max(wal) <= WAL_LIMIT_BYTES,
            f"largest {max(wal) / 2**20:.1f} MiB (limit {WAL_LIMIT_BYTES / 2**20:.0f} MiB)",
        )
        ok &= check("no temporary files left", not leftovers, f"{len(leftovers)} {leftovers[:5] if leftovers else ''}")
        print(f"  info  p99 of writes at half capacity: {result['writes']['p99']:.1f} ms")
    else:
        ok &= check(
            "p99 of writes",
            result["writes"]["p99"] <= WRITE_P99_GOAL_MS,
            f"{result['writes']['p99']:.1f} ms (goal <= {WRITE_P99_GOAL_MS} ms)",
        )
        print(f"  info  server RSS at the end: {rss[-1]:.0f} MiB; leftover temporary files: {len(leftovers)}")
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / ("soak.json" if args.soak else "load.json")).write_text(
        json.dumps(
            {
                "command": " ".join(["python bench/load.py", *(argv if argv is not None else sys.argv[1:])]),
                "rows": args.rows,
                "connections": args.connections,
                "seconds": seconds,
                "rate": rate,
                "result": result,
                "samples": samples,
                "leftoverTempFiles": leftovers,
                "passed": bool(ok),
            },
            indent=1,
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
