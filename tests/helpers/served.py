"""The served process (`python app.py`) for black-box tests that need its pid, port or URL: memory, body
limits, health, connections, shutdown."""

import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
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
    own_log = log_path is None  # a file of ours, outside the test's folders (restore tests read them whole)
    if own_log:
        handle, log_path = tempfile.mkstemp(prefix="service-", suffix=".log")
        os.close(handle)
    log = open(log_path, "ab")  # closed below; shown if the process dies on its own
    server = None
    try:
        for _ in range(3):  # a port taken between its probe and the service's bind: another port
            port = free_port()
            server = _started(tmp_path, settings, server_kind, port, log)
            if server is not None:
                break
        assert server is not None, "the service did not start: its port was taken three times"
        yield f"http://127.0.0.1:{port}", port, server
    finally:
        died = server.poll() if server is not None else None  # before being told to stop (a kill is expected)
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        log.close()
        tail = Path(log_path).read_bytes()[-4000:].decode(errors="replace")
        if own_log:
            os.unlink(log_path)
        if died not in (None, 0, -signal.SIGKILL, -signal.SIGTERM):  # a crash, or an exit in error
            raise AssertionError(f"the service exited by itself ({died}); its log ends:\n{tail}")


def _started(tmp_path, settings, server_kind, port, log):
    """The process once it answers /healthz, or None when its port was taken before it could bind it."""
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
    start = log.tell()
    server = subprocess.Popen(SERVERS[server_kind](port), cwd=ROOT, env=env, stderr=log)
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return server
        except requests.RequestException:
            pass
        if server.poll() is not None:
            log.flush()
            with open(log.name, "rb") as written:
                written.seek(start)
                if b"Address already in use" in written.read():
                    return None
        assert server.poll() is None and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.1)


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
    """A port free now, below Linux's ephemeral range (32768-60999), where the fakes and receivers that bind
    port 0 get theirs: a port probed, released and then bound by the service is not taken by them meanwhile."""
    for _ in range(100):
        port = random.randrange(20000, 32768)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port between 20000 and 32767")


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
