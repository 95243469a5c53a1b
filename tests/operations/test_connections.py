"""The connection envelope of docs/api.md §11, against the served process (`python app.py`) over sockets:
idle and slow connections do not lock the service out, and idle keep-alive connections are closed.

Timings are measured in bench/connections.py; here an answer only has to come at all, within a
timeout far below waitress's old 120-second idle limit that used to free the slots."""

import resource
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from tests.helpers.app import AGENT_TOKEN
from tests.helpers.served import ANSWER_TIMEOUT, served, served_process, sockets_held
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
IDLE_SECONDS = 3


def raise_open_file_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"this machine allows {hard} open files; the test needs {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def open_sockets(port, count):
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sockets.append(sock)
    return sockets


def answers(base):
    """/healthz and an authenticated API call, each within ANSWER_TIMEOUT."""
    health = requests.get(f"{base}/healthz", timeout=ANSWER_TIMEOUT)
    listing = requests.get(
        f"{base}/api/review/agent/tasks", headers={"x-review-agent-token": AGENT_TOKEN}, timeout=ANSWER_TIMEOUT
    )
    return health.status_code, listing.status_code


@pytest.mark.timeout(180)
def test_a_thousand_idle_connections_do_not_lock_the_service_out(tmp_path):
    raise_open_file_limit(4096)
    with served_process(tmp_path, CONNECTION_IDLE_SECONDS=60) as (base, server):
        idle = open_sockets(urlsplit(base).port, 1000)
        try:
            wait_until(lambda: sockets_held(server.pid) > 1000, 30, "the server did not accept them all")
            assert answers(base) == (200, 200)
        finally:
            for sock in idle:
                sock.close()


@pytest.mark.timeout(180)
def test_two_hundred_slow_header_senders_do_not_lock_the_service_out(tmp_path):
    raise_open_file_limit(4096)
    with served(tmp_path, CONNECTION_IDLE_SECONDS=60) as (base, port):
        slow = open_sockets(port, 200)
        stop, sent = threading.Event(), [0]  # bytes sent on every connection
        request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4096

        def trickle():
            for offset in range(len(request)):  # one byte a second on every connection
                if stop.wait(1):
                    return
                for sock in slow:
                    try:
                        sock.send(request[offset : offset + 1])
                    except OSError:
                        pass
                sent[0] += 1

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            wait_until(lambda: sent[0] >= 2, 30, "no bytes sent")  # a few bytes in: every connection is mid-headers
            assert answers(base) == (200, 200)
            later = sent[0] + 1
            wait_until(lambda: sent[0] >= later, 30, "no more bytes sent")  # and on, a byte a second
            assert answers(base) == (200, 200)
        finally:
            stop.set()
            sender.join(5)
            for sock in slow:
                sock.close()


@pytest.mark.timeout(120)
def test_idle_keep_alive_connections_are_closed_after_the_idle_limit(tmp_path):
    with served(tmp_path, CONNECTION_IDLE_SECONDS=IDLE_SECONDS) as (_base, port):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        while chunk := sock.recv(65536):  # b"": the server closed the kept-alive connection
            assert not chunk.startswith(b"HTTP/"), "no second answer was asked for"
        closed_after = time.monotonic() - started
        sock.close()
    assert IDLE_SECONDS - 0.5 <= closed_after < 25, closed_after
