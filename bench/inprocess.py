"""The app's own cost per request, without a server: each ratio scenario as a direct WSGI call.

    python bench/inprocess.py [--rows 2000] [--requests 3000]

Separates what the service's code costs (Flask, validation, SQLite, the reply) from what waitress
and thread hand-offs add under load, which bench/run.py measures together. One thread, wall time
per request after 200 warm-up calls; docs/performance.md uses these figures.
"""

import argparse
import io
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from bench.common import work_folder
from bench.seed import feedback_payload, seed, task_payload
from bench.settings import ADMIN, AGENT_TOKEN, BENCH_CONFIG, CLIENT_TOKEN

WARM_UP = 200


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000, help="tasks and feedback rows to prepare")
    parser.add_argument("--requests", type=int, default=3000, help="requests per scenario (warm-up included)")
    args = parser.parse_args(argv)

    work = work_folder("review-inprocess-")
    ids = seed(work / "instance", work / "uploads", args.rows)
    app = create_app(
        {**BENCH_CONFIG, "REVIEW_INSTANCE_PATH": str(work / "instance"), "REVIEW_UPLOADS_PATH": str(work / "uploads")},
        serve=True,
    )
    app.add_url_rule("/__bench/bare", "bench_bare", lambda: {"ok": True})

    def call(method, path, body=None, headers=None):
        """(status line, response headers) of one WSGI call."""
        data = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "CONTENT_LENGTH": str(len(data)),
        }
        if data:
            environ["CONTENT_TYPE"] = "application/json"
        environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in (headers or {}).items()})
        answer = {}
        b"".join(
            app(
                environ,
                lambda status, response_headers, exc_info=None: answer.update(status=status, headers=response_headers),
            )
        )
        return answer["status"], answer["headers"]

    _, headers = call("POST", "/api/auth/login", {"username": ADMIN[0], "password": ADMIN[1]})
    cookie = next(v for k, v in headers if k.lower() == "set-cookie").split(";", 1)[0]
    tasks, run = ids["task_ids"], uuid.uuid4().hex[:8]
    scenarios = {
        "bare": lambda n: ("GET", "/__bench/bare", None, {}),
        "task_detail": lambda n: ("GET", f"/api/review/tasks/{tasks[n % len(tasks)]}", None, {"cookie": cookie}),
        "create_task": lambda n: (
            "POST",
            "/api/review/agent/tasks",
            task_payload(n, tag=run),
            {"x-review-agent-token": AGENT_TOKEN},
        ),
        "create_feedback": lambda n: (
            "POST",
            "/api/feedbacks",
            feedback_payload(n, tag=run),
            {"x-feedback-client-token": CLIENT_TOKEN},
        ),
    }
    for name, make in scenarios.items():
        requests = [make(n) for n in range(args.requests)]
        for request in requests[:WARM_UP]:
            status, _ = call(*request)
            if not status.startswith(("200", "201")):
                raise SystemExit(f"{name}: {status}")
        started = time.perf_counter()
        for request in requests[WARM_UP:]:
            call(*request)
        per_request = (time.perf_counter() - started) / (len(requests) - WARM_UP) * 1000
        print(f"{name:16} {per_request:.3f} ms per request")


if __name__ == "__main__":
    main()
