"""Mail servers that misbehave before any mail is sent (docs/api.md §15): a greeting trickled a byte at a
time is inside the attempt's deadline like every later step, and a STARTTLS offered with no TLS behind it
names the setting that fits a plain relay."""

import pytest

from services.team import channels
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.review import article_payload, create_task
from tests.helpers.scripted import ScriptedServer
from tests.helpers.team import Mailbox, failed_mail, mail_settings, send_pass, smtp_server, team_rows

AGENT = {"x-review-agent-token": AGENT_TOKEN}
TRICKLE = 8.0  # seconds the slow server takes to greet, or stays silent in the TLS handshake (each step: 10 s)


def _trickled_greeting(conn, stopping):
    for byte in b"220 " + b"x" * int(TRICKLE / 0.05) + b"\r\n":
        if stopping.wait(0.05):
            return
        conn.sendall(bytes([byte]))
    conn.recv(1024)


def _up_to_the_tls_hello(conn):
    """A relay offering STARTTLS, up to the client's TLS hello (read)."""
    conn.sendall(b"220 relay ESMTP\r\n")
    conn.recv(1024)  # EHLO
    conn.sendall(b"250-relay\r\n250 STARTTLS\r\n")
    conn.recv(1024)  # STARTTLS
    conn.sendall(b"220 go ahead\r\n")
    conn.recv(1024)


def _starttls_without_tls(conn, stopping):
    _up_to_the_tls_hello(conn)  # answered in plain text
    conn.sendall(b"500 what is this\r\n" * 4)
    stopping.wait(2)


def _silent_in_the_handshake(conn, stopping):
    _up_to_the_tls_hello(conn)  # never answered
    stopping.wait(TRICKLE)


def _mail(make_app, server, **extra):
    return failed_mail(make_app, mail_settings(server.port, **extra))


@pytest.fixture
def scripted():
    servers = []

    def start(script):
        servers.append(ScriptedServer(script))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def test_a_greeting_trickled_past_the_deadline_is_hung_up_on(make_app, scripted, monkeypatch):
    """The old sender started its clock after the greeting: a server greeting a byte a second held it
    61 s, past the 60 s claim after which another process sends the same mail."""
    monkeypatch.setattr(channels, "SMTP_DEADLINE", 0.5)
    row, took = _mail(make_app, scripted(_trickled_greeting), SMTP_STARTTLS=False)
    assert took < TRICKLE / 2, took  # well before the greeting would have ended
    assert row.status == "pending" and row.attempts == 1 and "took longer than 0.5 s" in row.last_error, row.last_error


def test_starttls_offered_without_tls_names_smtp_starttls_false(make_app, scripted):
    row, _took = _mail(make_app, scripted(_starttls_without_tls), SMTP_STARTTLS=True)
    assert row.status == "pending"
    assert "answered the TLS handshake in plain text" in row.last_error, row.last_error
    assert "SMTP_STARTTLS=false" in row.last_error, row.last_error


def test_a_tls_handshake_left_unanswered_is_hung_up_on_too(make_app, scripted, monkeypatch):
    """After STARTTLS the TLS socket hides the plain one, whose shutdown did nothing: the handshake
    waited out its 10 s step. The deadline now cuts the connection itself."""
    monkeypatch.setattr(channels, "SMTP_DEADLINE", 0.5)
    row, took = _mail(make_app, scripted(_silent_in_the_handshake), SMTP_STARTTLS=True)
    assert took < TRICKLE / 2, took
    assert "took longer than 0.5 s" in row.last_error and "SMTP_STARTTLS" not in row.last_error, row.last_error


class _RefusesGoodbye(Mailbox):
    """Takes the mail, then answers QUIT with 421 instead of 221."""

    async def handle_QUIT(self, server, session, envelope):
        return "421 closing"


def test_a_mail_taken_is_sent_whatever_the_goodbye_says(make_app):
    """The server answered the mail 250 and the QUIT 421: the mail is delivered, so it is `sent`, not tried
    again (a second copy in every inbox)."""
    mailbox = _RefusesGoodbye()
    with smtp_server(handler=mailbox) as (_, port):
        with built_app(make_app, **mail_settings(port)) as app:
            create_task(app.test_client(), AGENT, article_payload())
            assert send_pass(app) == {"email": 1}
            [row] = team_rows("email")
    assert (row.status, row.attempts, row.last_error) == ("sent", 1, None)
    assert len(mailbox.messages) == 1
