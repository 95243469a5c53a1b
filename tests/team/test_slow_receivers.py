"""A robot or agent receiver that trickles its answer's headers (docs/api.md §15): the whole attempt
(connecting, the headers, the body) ends by outbound.ATTEMPT_SECONDS, below the senders' claims, so
no second process takes the message while the first still waits, and it is not sent twice."""

import socket
import threading
import time
from datetime import timedelta

import pytest
import requests

from models import db
from rules.ids import iso, utcnow
from services import outbound
from services.review import webhooks
from services.team import sender
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.review import article_payload, create_task, sent_back_task
from tests.helpers.scripted import ScriptedServer
from tests.helpers.team import send_pass, sender_of, team_rows

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
DEADLINE = 0.5  # outbound.ATTEMPT_SECONDS in these tests (30 s in service)
TRICKLE = 3.0  # seconds the receiver takes to send its headers, one byte at a time


class TricklingReceiver(ScriptedServer):
    """A real HTTP server on 127.0.0.1 that takes TRICKLE seconds to send its headers (a byte every
    0.05 s), then answers 200 with `body`. Counts the requests it got."""

    def __init__(self, body=b'{"errcode":0,"errmsg":"ok"}'):
        self.body = body
        self.requests = 0
        self.arrived = threading.Condition()
        super().__init__(self._answer)
        self.url = f"http://127.0.0.1:{self.port}/cgi-bin/webhook/send?key=k"

    def _answer(self, conn, stopping):
        if not _read_request(conn):  # a connection shut before it carried a request
            return
        with self.arrived:
            self.requests += 1
            self.arrived.notify_all()
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for byte in b"X-Slow: " + b"a" * int(TRICKLE / 0.05) + b"\r\n":
            if stopping.wait(0.05):
                return
            conn.sendall(bytes([byte]))
        conn.sendall(b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(self.body) + self.body)

    def wait_for(self, count, timeout=15):  # only an upper bound: a loaded machine may start the sender late
        with self.arrived:
            return self.arrived.wait_for(lambda: self.requests >= count, timeout)


def _read_request(conn):
    """The whole request (headers, then Content-Length bytes): a reply closed on unread bytes is reset.
    Whether any came."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next((line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), b"0")
    )
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk
    return bool(data)


@pytest.fixture
def receiver(monkeypatch):
    monkeypatch.setattr(outbound, "ATTEMPT_SECONDS", DEADLINE)
    slow = TricklingReceiver()
    yield slow
    slow.stop()


def _one_agent_webhook():
    """One message for the agent's receiver (a task sent back for rework), pending now."""
    with db.connection_context(), db.atomic():
        webhooks.enqueue_rejection(sent_back_task(topic="t", rejection_reason="other", rejection_note="n"))


def in_thread(work):
    """Runs `work` on a thread of its own; returns (the thread, {"took": seconds, "result": …})."""
    outcome = {}

    def run():
        started = time.monotonic()
        outcome["result"] = work()
        outcome["took"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_robot_trickling_its_headers_is_abandoned_by_the_deadline_and_not_sent_twice(make_app, receiver, monkeypatch):
    settings = {"NOTIFY_WECOM_WEBHOOK_URL": receiver.url, "REVIEW_WEBHOOK_RETRY_DELAYS": "3600"}
    with built_app(make_app, **settings) as app:
        create_task(app.test_client(), AGENT, article_payload())
        first, outcome = in_thread(lambda: send_pass(app))  # one process's sender
        assert receiver.wait_for(1)
        first.join(TRICKLE * 3)  # a loaded machine may take longer than the deadline to record the failure
        assert not first.is_alive()
        # Another process's sender, once the first one's claim has run out.
        later = utcnow() + timedelta(seconds=sender.CLAIM_SECONDS + 1)
        monkeypatch.setattr(sender, "utcnow", lambda: later)
        assert send_pass(app) == {"wecom": 0}
        [row] = team_rows("wecom")
    assert outcome["result"] == {"wecom": 0} and outcome["took"] < TRICKLE, outcome  # cut before the headers came
    assert receiver.requests == 1  # sent once, not again by the second sender
    assert (row.status, row.attempts, row.last_error) == ("pending", 1, "the robot timed out")  # retried later


def test_an_agent_receiver_trickling_its_headers_is_abandoned_by_the_deadline_and_not_sent_twice(make_app, receiver):
    with built_app(make_app):
        _one_agent_webhook()

        def one_pass(now=None):
            with db.connection_context():
                return webhooks.deliver_due(receiver.url, "", (3600,), now=now)

        first, outcome = in_thread(one_pass)
        assert receiver.wait_for(1)
        first.join(TRICKLE * 3)  # a loaded machine may take longer than the deadline to record the failure
        assert not first.is_alive()
        assert one_pass(now=utcnow() + timedelta(seconds=webhooks.CLAIM_SECONDS + 1)) == 0  # nothing due
        with db.connection_context():
            [row] = list(webhooks.OutboxMessage.select())
    assert outcome["result"] == 1 and outcome["took"] < TRICKLE, outcome  # cut before the headers came
    assert receiver.requests == 1
    assert (row.status, row.attempts, row.last_error) == ("pending", 1, "receiver timed out")


def test_an_attempt_and_its_connect_timeout_stay_below_both_claims():
    assert outbound.ATTEMPT_SECONDS + outbound.CONNECT_SECONDS < min(sender.CLAIM_SECONDS, webhooks.CLAIM_SECONDS) / 1.5


def test_a_prompt_receiver_still_answers_within_the_deadline(receiver, monkeypatch):
    """The deadline ends slow attempts only: a quick answer arrives whole (status and body)."""
    monkeypatch.setattr(outbound, "ATTEMPT_SECONDS", TRICKLE * 3)
    status, body = outbound.post(receiver.url, b"{}", {"content-type": "application/json"}, read_at_most=1000)
    assert (status, body) == (200, receiver.body)


def test_a_name_lookup_past_the_deadline_sends_nothing(receiver, monkeypatch):
    """The deadline came while the receiver's name was being looked up (before any socket): the attempt ends
    at its deadline, not when the lookup does (a blocking getaddrinfo cannot be cut: the old attempt waited
    it out, 10 s here), and the request never goes out to be answered past the claim."""
    lookup, done = socket.getaddrinfo, threading.Event()

    def slow_lookup(*args, **kwargs):  # a resolver that answers 10 s on, or when the test ends
        done.wait(10)
        return lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    url = receiver.url.replace("127.0.0.1", "localhost")
    started = time.monotonic()
    try:
        with pytest.raises(requests.Timeout):
            outbound.post(url, b"{}", {"content-type": "application/json"})
        took = time.monotonic() - started
    finally:
        done.set()
    assert took < 5, f"the attempt waited {took:.1f} s for the name lookup"  # half of its hang, at most
    assert not receiver.wait_for(1, timeout=TRICKLE), "the request went out after the deadline"


def test_a_name_with_several_addresses_is_tried_at_each(receiver, monkeypatch):
    """The lookup is now the attempt's own (on its thread): each address it gave is still tried in turn, an
    unreachable first (the receiver listens on 127.0.0.1 alone), as urllib3 did. A guard, not a reproduction."""
    port = receiver.port

    def two_addresses(host, *args, **kwargs):
        if host != "receiver.test":
            return lookup(host, *args, **kwargs)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),  # nobody listens there
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]

    lookup = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    monkeypatch.setattr(outbound, "ATTEMPT_SECONDS", TRICKLE * 3)
    status, _ = outbound.post(f"http://receiver.test:{port}/", b"{}", {"content-type": "application/json"})
    assert status == 200 and receiver.requests == 1


def _taken_over(lease):
    """Another process's sender taking every pending message, its lease `lease` (the first one's ran out)."""
    webhooks.OutboxMessage.update(next_attempt_at=lease).where(webhooks.OutboxMessage.status == "pending").execute()


def test_an_agent_webhook_whose_claim_ran_out_during_its_attempt_leaves_its_outcome_to_the_taker(make_app, monkeypatch):
    """The attempt went on past its claim (a write lock held long after the answer, say): the message is
    another sender's by then, and this one's outcome is dropped, not written over that sender's claim."""
    other = iso(utcnow() + timedelta(minutes=5))

    def answered_after_the_claim(url, secret, message):
        _taken_over(other)
        return None  # delivered

    monkeypatch.setattr(webhooks, "_post", answered_after_the_claim)
    with built_app(make_app):
        with db.connection_context():
            _one_agent_webhook()
            assert webhooks.deliver_due("http://127.0.0.1:9/", "", (3600,)) == 1
            [row] = list(webhooks.OutboxMessage.select())
    assert (row.status, row.attempts, row.next_attempt_at) == ("pending", 0, other)


def test_a_team_message_whose_claim_ran_out_during_its_attempt_leaves_its_outcome_to_the_taker(make_app):
    other = iso(utcnow() + timedelta(minutes=5))

    def sent_after_the_claim(message):
        _taken_over(other)
        return "the robot timed out"

    settings = {"NOTIFY_WECOM_WEBHOOK_URL": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"}
    with built_app(make_app, **settings) as app:
        create_task(app.test_client(), AGENT, article_payload())
        with db.connection_context():
            args = next(args for args in sender_of(app) if args[0] == "wecom")
            assert sender.deliver(args[0], sent_after_the_claim, *args[2:]) == 0
        [row] = team_rows("wecom")
    assert (row.status, row.attempts, row.last_error, row.next_attempt_at) == ("pending", 0, None, other)
