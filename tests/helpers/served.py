"""The served process (`python app.py`) for black-box tests that need its pid, port or URL: memory, body
limits, health, connections, shutdown."""

import os
import re
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.helpers.app import AGENT_TOKEN
from tests.helpers.feedback import UNLIMITED
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
AGENT = {"x-review-agent-token": AGENT_TOKEN}
CLIENT = {"x-feedback-client-token": "client-web-token"}
METRICS_TOKEN = "served-metrics-token"  # a test that counts a worker's passes (passes()) sets it


# The ways to serve (docs/api.md §1): `python app.py`, and a WSGI server calling the factory.
SERVERS = {
    "app.py": lambda port: [sys.executable, "app.py"],
    "waitress-serve": lambda port: [
        sys.executable,
        "-m",
        "waitress",
        f"--listen=127.0.0.1:{port}",
        "--call",
        "app:create_app",
    ],
}


@contextmanager
def _serve(tmp_path, settings, server_kind="app.py", log_path=None):
    """`python app.py` (or another of SERVERS) on a free port with the agent's token and `settings`;
    yields (base URL, port, Popen). Its log goes to `log_path` when given."""
    port = free_port()
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        "PORT": str(port),
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "WEBHOOK_SENDER_ENABLED": "false",
        **{key: str(value) for key, value in settings.items()},
    }
    env.pop("FLASK_RUN_FROM_CLI", None)
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # closed below
    server = subprocess.Popen(SERVERS[server_kind](port), cwd=ROOT, env=env, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:

        def started():
            assert server.poll() is None, "the service ended as it started"
            return answers_ok(f"{base}/healthz")

        wait_until(started, 60, "the service did not start", every=0.1)
        yield base, port, server
    finally:
        server.terminate()
        server.wait(timeout=30)
        if log_path:
            log.close()


@contextmanager
def served_process(tmp_path, server_kind="app.py", **settings):
    """`python app.py` (or another of SERVERS) on a free port with an agent and a feedback client token;
    yields (base URL, Popen)."""
    with _serve(tmp_path, {"FEEDBACK_CLIENT_TOKENS": "web=client-web-token", **UNLIMITED, **settings}, server_kind) as (
        base,
        _port,
        server,
    ):
        yield base, server


def peak_memory(pid):
    """The process's peak resident memory so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def sockets_held(pid):
    """How many sockets the process has open: its listener and the connections it has accepted."""
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            held += os.readlink(fd).startswith("socket:")
        except FileNotFoundError:  # closed meanwhile
            pass
    return held


ANSWER_TIMEOUT = 5  # seconds; the old service hung until the idle connections timed out (120 s)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(tmp_path, **settings):
    """`python app.py` on a free port; yields (base URL, port)."""
    with _serve(tmp_path, settings) as (base, port, _server):
        yield base, port


def listening(port):
    """Whether a process accepts connections on 127.0.0.1:`port` (one just started is ready to be called)."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def answers_ok(url):
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def passes(base, worker):
    """How many passes the process's background `worker` has made (/metrics: review_worker_passes)."""
    text = requests.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10).text
    match = re.search(rf'^review_worker_passes_total{{worker="{re.escape(worker)}"}} (\S+)$', text, re.M)
    return int(float(match.group(1))) if match else 0


def wait_for_passes(bases, worker, more=2, at_least=0):
    """Until each process's `worker` has made `more` passes from now (and `at_least` in all): what it
    would have done by then is done, proven without sleeping for a guessed while."""
    targets = {base: max(passes(base, worker) + more, at_least) for base in bases}
    wait_until(
        lambda: all(passes(base, worker) >= target for base, target in targets.items()), 120, f"{worker} made no passes"
    )
