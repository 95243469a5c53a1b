"""Request data cannot forge a log line (docs/api.md §11 Logs), checked on the served process's output."""

import http.client
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from services.logs import escape_controls
from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
FORGED = "2026-11-24 23:59:59,000 INFO review admin account mallory created"


def test_escape_controls_makes_control_characters_visible():
    assert escape_controls("a\nb\r\x1b[31m\u2028\x85ok") == "a\\nb\\r\\x1b[31m\\u2028\\x85ok"
    assert escape_controls("plain text, 中文") == "plain text, 中文"


def test_a_newline_in_a_request_path_cannot_start_a_log_line(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
    }
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    lines = []

    def read():
        for line in server.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: answers_ok(f"http://127.0.0.1:{port}/healthz"), 60, "the service did not start")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/api/x%0A" + FORGED.replace(" ", "%20") + "%0D%1B[2J")
        assert connection.getresponse().status == 404
        connection.close()
        # The access line is written after the answer.
        wait_until(lambda: any("GET /api/x" in line for line in lines), 10, "no access line for the request")
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        reader.join(10)
    stderr = "".join(lines)
    lines = stderr.splitlines()
    assert not any(line.startswith("2026-11-24 23:59:59") for line in lines)
    assert any(
        "GET /api/x\\n2026-11-24 23:59:59,000 INFO review admin account mallory created\\r\\x1b[2J 404" in line
        for line in lines
    ), stderr[-1500:]
