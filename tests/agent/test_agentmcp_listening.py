"""`python -m agentmcp --http PORT` says where it listens (docs/api.md §13): one line on stderr, printed once
the port is open, with the URL a client connects to. Before, it printed nothing at all."""

import os
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.helpers.app import AGENT_TOKEN

ROOT = Path(__file__).resolve().parents[2]
HTTP_TOKEN = "mcp-http-token-for-the-listening-line"
LINE = re.compile(r"MCP server listening on (http://127\.0\.0\.1:(\d+)/mcp)")


def _first_line(process, seconds):
    """The first line the process writes to stderr within `seconds` ("" if none)."""
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            return process.stderr.readline()
        if process.poll() is not None:
            return process.stderr.readline()
    return ""


def _serve(port):
    env = {
        **os.environ,
        "REVIEW_BASE_URL": "http://127.0.0.1:9",
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "MCP_HTTP_TOKEN": HTTP_TOKEN,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "agentmcp", "--http", str(port)], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
    )


def test_http_prints_where_it_listens_once_the_port_is_open():
    server = _serve(0)  # 0: any free port, which the line then names
    try:
        line = _first_line(server, 60)
        found = LINE.search(line)
        assert found, repr(line)
        url, port = found.group(1), int(found.group(2))
        assert port > 0
        # Listening already when the line is printed: a request right away reaches the server.
        answer = requests.post(url, json={}, timeout=10)
        assert answer.status_code == 401  # the bearer token is still asked for
        assert (
            requests.post(url, json={}, timeout=10, headers={"Authorization": f"Bearer {HTTP_TOKEN}"}).status_code
            != 401
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
