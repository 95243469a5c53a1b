"""The team's channels (docs/api.md §15): WeCom, Feishu and DingTalk group robots, and e-mail over SMTP.

Each sender makes one attempt and returns None on success or a one-line reason to retry on. Reasons never
name the webhook URL (it holds the robot's key) nor a secret: requests' exception texts quote the URL, so
only their type is kept.
"""

import base64
import hashlib
import hmac
import json
import smtplib
import socket
import ssl
import time
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import quote_plus

import requests

from rules.client_input import load_json
from services import outbound
from services.settings.team import Robot, Smtp, TeamSettings
from services.team.messages import Message, one_line

REPLY_MAX = 64 * 1024
SMTP_TIMEOUT = 10  # connecting, and each step of the SMTP conversation
# The whole conversation from before connecting: a server answering each step just in time must not hold
# a message past its claim (sender.CLAIM_SECONDS, 60 s), or a second process would send it again.
SMTP_DEADLINE = 40
# WeCom's markdown content is at most 4096 bytes (UTF-8); a digest stays under it on every robot.
ROBOT_LIMIT_BYTES = 4000
EMAIL_LIMIT_BYTES = 200_000
STARTTLS_FIX = "the mail server {what}: for a plain relay set SMTP_STARTTLS=false"
# OpenSSL's reasons when the answer to the TLS hello is not TLS at all (a plain relay's text reply).
PLAIN_REPLIES = {
    "WRONG_VERSION_NUMBER",
    "UNKNOWN_PROTOCOL",
    "RECORD_LAYER_FAILURE",
    "PACKET_LENGTH_TOO_LONG",
    "HTTP_REQUEST",
}

Send = Callable[[Message], str | None]


def feishu_sign(secret: str, timestamp: int) -> str:
    """Feishu: Base64 of HMAC-SHA256 keyed with `timestamp + "\\n" + secret`, over an empty message."""
    return base64.b64encode(hmac.new(f"{timestamp}\n{secret}".encode(), b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """DingTalk: Base64 of HMAC-SHA256 keyed with the secret, over `timestamp + "\\n" + secret`."""
    mac = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256)
    return base64.b64encode(mac.digest()).decode()


def _post(url: str, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(the robot's JSON reply, None) or ({}, why it failed); the whole attempt within
    outbound.ATTEMPT_SECONDS, below the claim (services/team/sender.py)."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    try:
        status, raw = outbound.post(
            url, data, {"content-type": "application/json; charset=utf-8"}, read_at_most=REPLY_MAX
        )
    except requests.Timeout:
        return {}, "the robot timed out"
    except requests.RequestException as exc:
        return {}, f"the robot is unreachable ({type(exc).__name__})"
    if len(raw) > REPLY_MAX:
        return {}, "the robot's reply is too large"
    if not 200 <= status < 300:
        return {}, f"the robot answered HTTP {status}"
    try:  # the strict reader of client input (docs/api.md §2, §15): a deep reply is a failed attempt, not a crash
        reply = load_json(raw)
    except ValueError as exc:
        return {}, f"the robot's reply cannot be read as JSON ({one_line(exc, 120)})"
    if not isinstance(reply, dict):
        return {}, "the robot's reply is not a JSON object"
    return reply, None


def _outcome(reply: dict[str, Any], failure: str | None, code_key: str, message_key: str) -> str | None:
    if failure is not None or reply.get(code_key) == 0:
        return failure
    return f"the robot refused: {code_key} {reply.get(code_key)!r} {one_line(reply.get(message_key), 120)}".strip()


def wecom(robot: Robot) -> Send:
    """WeCom group robot: markdown; reply {"errcode": 0} is success."""

    def send(message: Message) -> str | None:
        body = {"msgtype": "markdown", "markdown": {"content": message.markdown}}
        return _outcome(*_post(robot.url, body), "errcode", "errmsg")

    return send


def feishu(robot: Robot) -> Send:
    """Feishu custom bot: text; with a secret, `timestamp` (Unix seconds, a string) and `sign`."""

    def send(message: Message) -> str | None:
        body: dict[str, Any] = {"msg_type": "text", "content": {"text": message.text}}
        if robot.secret:
            timestamp = int(time.time())
            body = {"timestamp": str(timestamp), "sign": feishu_sign(robot.secret, timestamp), **body}
        return _outcome(*_post(robot.url, body), "code", "msg")

    return send


def dingtalk(robot: Robot) -> Send:
    """DingTalk custom robot: markdown; with a secret the URL gets `&timestamp=<ms>&sign=<…>`."""

    def send(message: Message) -> str | None:
        url = robot.url
        if robot.secret:
            millis = int(time.time() * 1000)
            sign = quote_plus(dingtalk_sign(robot.secret, millis))
            url += f"{'&' if '?' in url else '?'}timestamp={millis}&sign={sign}"
        # DingTalk's markdown breaks a line only after two spaces.
        body = {
            "msgtype": "markdown",
            "markdown": {"title": one_line(message.subject, 60), "text": message.markdown.replace("\n", "  \n")},
        }
        return _outcome(*_post(url, body), "errcode", "errmsg")

    return send


def email(smtp: Smtp) -> Send:
    """E-mail through SMTP (docs/api.md §15): STARTTLS when SMTP_STARTTLS, then the login when SMTP_USER is set."""

    def send(message: Message) -> str | None:
        mail = EmailMessage()
        mail["Subject"] = message.subject
        mail["From"] = smtp.sender
        mail["To"] = ", ".join(smtp.recipients)
        mail["Date"] = formatdate(usegmt=True)
        mail["Message-ID"] = make_msgid(domain=smtp.sender.rpartition("@")[2])
        mail.set_content(message.text)
        deadline = outbound.Deadline(SMTP_DEADLINE)  # from before connecting: greeting to goodbye inside it
        accepted = False
        try:
            try:
                with _DeadlineSMTP(deadline, smtp.host, smtp.port, timeout=SMTP_TIMEOUT) as client:
                    if smtp.starttls and (refused := _starttls(client)):
                        return refused
                    if smtp.user:
                        client.login(smtp.user, smtp.password)
                    client.send_message(mail)
                    accepted = True
            except (smtplib.SMTPException, OSError):
                if accepted:  # the server took the mail; a goodbye refused or cut off does not unsend it
                    return None
                if deadline.expired.is_set():
                    return f"the mail server took longer than {SMTP_DEADLINE:g} s: hung up"
                raise
        except smtplib.SMTPRecipientsRefused:
            return "the mail server refused every recipient"
        except smtplib.SMTPResponseException as exc:  # its text may echo what was sent: the code only
            return f"the mail server refused ({exc.smtp_code})"
        except smtplib.SMTPException as exc:
            return f"mail not sent ({type(exc).__name__})"
        except OSError as exc:  # refused, unreachable, timed out, or a certificate that does not check
            return f"the mail server is unreachable ({type(exc).__name__})"
        finally:
            deadline.end()
        return None

    return send


class _DeadlineSMTP(smtplib.SMTP):
    """smtplib.SMTP whose connection its deadline watches from the start: the constructor already reads
    the server's greeting, which a stalling server can trickle for as long as it likes."""

    def __init__(self, deadline: outbound.Deadline, *args: Any, **kwargs: Any):
        self.deadline = deadline
        super().__init__(*args, **kwargs)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:  # smtplib's hook (SMTP_SSL's too)
        sock: socket.socket = super()._get_socket(host, port, timeout)  # type: ignore[misc]
        self.deadline.watch_socket(sock)
        return sock


def _starttls(client: smtplib.SMTP) -> str | None:
    """Upgrade the connection; a server that does not offer it or refuses it is a plain relay, and
    the reason names the setting that fits one (docs/api.md §15)."""
    try:
        client.starttls(context=ssl.create_default_context())
    except smtplib.SMTPNotSupportedError:
        return STARTTLS_FIX.format(what="does not offer STARTTLS")
    except smtplib.SMTPResponseException as exc:
        return STARTTLS_FIX.format(what=f"refused STARTTLS ({exc.smtp_code})")
    except ssl.SSLError as exc:
        if exc.reason not in PLAIN_REPLIES:  # a certificate, a cipher, a cut connection: not a plain relay
            raise
        return STARTTLS_FIX.format(what=f"offered STARTTLS but answered the TLS handshake in plain text ({exc.reason})")
    return None


def senders(team: TeamSettings) -> dict[str, tuple[Send, int]]:
    """channel -> (its sender, the most bytes a message to it may hold), for the configured channels."""
    robots = {"wecom": wecom, "feishu": feishu, "dingtalk": dingtalk}
    found = {channel: (robots[channel](robot), ROBOT_LIMIT_BYTES) for channel, robot in team.robots.items()}
    if team.smtp is not None:
        found["email"] = (email(team.smtp), EMAIL_LIMIT_BYTES)
    return found
