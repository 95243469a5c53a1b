"""What every request and answer goes through: the connection, the request id and access log line,
and the protective headers."""

import logging
import re
import secrets
import time

from flask import g, request

from models import db
from rules import accounts

access_log = logging.getLogger("review.access")


def content_security_policy(settings):
    """Pages run only their own scripts and load images only from here and the allowed image hosts."""
    hosts = " ".join(f"{host}:*" for host in settings.remote_image_hosts if re.fullmatch(r"[A-Za-z0-9*.-]+", host))
    return (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "  # article styles are inline
        f"img-src 'self' {hosts}".rstrip()
        + "; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


def init_app(app):
    policy = content_security_policy(app.extensions["settings"])
    configured = app.extensions["settings"].accounts

    @app.after_request
    def protective_headers(response):
        """One place for what every answer carries: no sniffing, pages in no frame, nothing personal
        kept in a cache (Back shows the list as it is now; a task or a feedback's contacts stay off disk)."""
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        if response.mimetype == "text/html":
            response.headers.setdefault("Content-Security-Policy", policy)
            response.headers.setdefault("X-Frame-Options", "DENY")
        if response.mimetype in ("text/html", "application/json", "text/csv"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.before_request
    def open_connection():
        g.request_id = secrets.token_hex(8)
        g.started = time.perf_counter()
        accounts.use(configured)  # what publicAccount accepts (docs/api.md §18)
        if request.path != "/healthz":  # the health check reports a failing database itself
            db.connect(reuse_if_open=True)

    @app.after_request
    def log_request(response):
        response.headers["X-Request-Id"] = g.get("request_id", "-")
        duration = (time.perf_counter() - g.get("started", time.perf_counter())) * 1000
        access_log.info(
            "%s %s %s %.1fms request_id=%s",
            request.method,
            request.path,
            response.status_code,
            duration,
            g.get("request_id", "-"),
        )
        return response

    @app.teardown_request
    def close_connection(_exc):
        if not db.is_closed():
            db.close()
