"""Shared by the team notification tests: the robots' secrets, an SMTP server (aiosmtpd), the settings
that point the service at them, and a way to run one sender pass per channel by hand (the robots
themselves are the `robots` fixture of tests/team/conftest.py)."""

import ssl
import subprocess
from contextlib import contextmanager
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from models import OutboxMessage, db
from services.team.sender import deliver, deliveries
from tests.helpers.served import free_port

FEISHU_SECRET = "feishu-secret-abc123"
DINGTALK_SECRET = "SEC0123456789abcdef0123456789abcdef"
PUBLIC_URL = "https://review.example.com"
SMTP_USER, SMTP_PASSWORD = "notify@example.com", "smtp-password-xyz"


def robot_settings(robots, **extra):
    return {
        "NOTIFY_WECOM_WEBHOOK_URL": robots["wecom"].url,
        "NOTIFY_FEISHU_WEBHOOK_URL": robots["feishu"].url,
        "NOTIFY_FEISHU_SECRET": FEISHU_SECRET,
        "NOTIFY_DINGTALK_WEBHOOK_URL": robots["dingtalk"].url,
        "NOTIFY_DINGTALK_SECRET": DINGTALK_SECRET,
        "REVIEW_PUBLIC_URL": PUBLIC_URL,
        "REVIEW_DEFAULT_LANGUAGE": "zh-CN",
        **extra,
    }  # the service's default (the tests' make_app says en)


def mail_settings(port, **extra):
    """E-mail to one editor through the SMTP server on 127.0.0.1:`port`, plain unless `extra` says."""
    return {
        "NOTIFY_EMAIL_TO": "editor@example.com",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": port,
        "SMTP_STARTTLS": False,
        "SMTP_FROM": SMTP_USER,
        **extra,
    }


def failed_mail(make_app, settings):
    """A task created, then one e-mail pass that fails: (its outbox row, the pass's seconds)."""
    import time

    from tests.helpers.app import AGENT_TOKEN, built_app
    from tests.helpers.review import article_payload, create_task

    with built_app(make_app, **settings) as app:
        create_task(app.test_client(), {"x-review-agent-token": AGENT_TOKEN}, article_payload())
        started = time.monotonic()
        assert send_pass(app) == {"email": 0}
        took = time.monotonic() - started
        [row] = team_rows("email")
    return row, took


def sender_of(app):
    settings = app.extensions["settings"]
    return deliveries(settings.team, settings.webhook_retry_delays, settings.default_language)


def send_pass(app, channels=None):
    """One delivery pass per channel, in this thread; {channel: messages delivered}."""
    with db.connection_context():
        return {args[0]: deliver(*args) for args in sender_of(app) if channels is None or args[0] in channels}


def team_rows(channel=None):
    with db.connection_context():
        query = OutboxMessage.select().where(OutboxMessage.channel != "agent").order_by(OutboxMessage.id)
        return list(query.where(OutboxMessage.channel == channel) if channel else query)


class Mailbox:
    """aiosmtpd handler: keeps each message and who logged in."""

    def __init__(self):
        self.messages, self.logins = [], []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(
            (envelope.mail_from, envelope.rcpt_tos, message_from_bytes(envelope.content, policy=policy.default))
        )
        return "250 OK"

    def authenticate(self, server, session, envelope, mechanism, auth_data):
        ok = (auth_data.login, auth_data.password) == (SMTP_USER.encode(), SMTP_PASSWORD.encode())
        if ok:
            self.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)


def self_signed(folder):
    """(certificate, key) for 127.0.0.1, made with the openssl command."""
    cert, key = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@contextmanager
def smtp_server(tls=None, handler=None):
    """A real SMTP server on 127.0.0.1; `tls` = (cert, key): STARTTLS offered, required before AUTH."""
    mailbox = handler or Mailbox()
    options = {}
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*map(str, tls))
        options = {
            "tls_context": context,
            "require_starttls": True,
            "authenticator": mailbox.authenticate,
            "auth_required": True,
        }
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port(), **options)
    controller.start()
    try:
        yield mailbox, controller.port
    finally:
        controller.stop()
