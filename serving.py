"""Serving the app with waitress: `python app.py` ends here. The connection limits, the early 413, `/healthz` on
threads of its own and the drain on SIGTERM: docs/api.md §11 and docs/operations.md "Health checks and large
bodies". These are the only places waitress is used past its public API; waitress writes answers from its main
loop, so the loop keeps running while requests drain."""

import json
import logging
import resource
import signal
import threading
import time

import waitress
from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from models import db
from rules.limits import MAX_REQUEST_BODY_BYTES

log = logging.getLogger("review")
LOOP_SECONDS = 0.2  # how soon a stop request is noticed
RESERVED_FILES = 128  # open files kept for the database, uploads, logs and outbound calls
WANTED_FILES = 65536
HEALTH_PATH = "/healthz"
HEALTH_THREADS = 2  # answer health checks while every API thread is busy
# waitress's own refusals (a request it cannot parse, a body over the limit) in the API's error codes.
WAITRESS_CODES = {400: "validation_error", 413: "payload_too_large", 431: "validation_error"}


def open_file_limit() -> int:
    """Raise this process's open-file limit towards the hard limit (each connection is a file); the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = WANTED_FILES if hard == resource.RLIM_INFINITY else min(WANTED_FILES, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            log.warning("could not raise the open-file limit above %s", soft)
    return WANTED_FILES if soft == resource.RLIM_INFINITY else soft


def connection_settings(idle_seconds: int, body_bytes: int = MAX_REQUEST_BODY_BYTES) -> dict:
    """waitress's connection envelope (docs/api.md §11): its defaults let 100 idle sockets lock every client out,
    and its 1 GB body limit spooled a large POST to disk. An idle connection holds no worker thread, only a file."""
    return {
        "connection_limit": max(100, open_file_limit() - RESERVED_FILES),
        "channel_timeout": idle_seconds,  # an idle keep-alive connection is closed after this
        "cleanup_interval": max(1, min(30, idle_seconds // 2)),  # how often idle ones are looked for
        "asyncore_use_poll": True,  # select() stops at 1,024 file descriptors
        "max_request_body_size": body_bytes + 1,  # waitress refuses a body of this size or more
    }


class _ErrorTask(ErrorTask):
    """waitress's refusals in the error shape of docs/api.md §2 instead of its plain text."""

    def execute(self):
        error = self.request.error
        limit = self.channel.adj.max_request_body_size - 1
        if error.code == 413:
            message = f"the request body is larger than {limit} bytes, the most this service reads"
            details = {"_body": [f"larger than {limit} bytes"]}
        else:
            message, details = f"the request could not be read: {error.reason.lower()}", {}
        body = json.dumps(
            {"error": {"code": WAITRESS_CODES.get(error.code, "http_error"), "message": message, "details": details}}
        ).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(HTTPChannel):
    error_task_class = _ErrorTask


def _health_apart(server):
    """Run `/healthz` on threads of its own (docs/operations.md "Health checks and large bodies")."""
    health = ThreadedTaskDispatcher()
    health.set_thread_count(HEALTH_THREADS)
    queue_for_work = server.add_task

    def add_task(channel):
        request = channel.requests[0] if channel.requests else None
        if request is not None and not request.error and request.path == HEALTH_PATH:
            health.add_task(channel)
        else:
            queue_for_work(channel)

    server.add_task = add_task
    return health


def _busy(server, dispatchers):
    """Requests being read, queued, run or answered."""
    for dispatcher in dispatchers:
        with dispatcher.lock:
            if dispatcher.queue or dispatcher.active_count:
                return True
    return any(
        getattr(channel, "requests", None) or getattr(channel, "total_outbufs_len", 0)
        for channel in list(server._map.values())
    )


def _drain(server, health, grace):
    """Stop accepting; keep answering what is in flight until it is done or `grace` seconds pass."""
    server.accepting = False
    server.del_channel()  # out of the loop's map; the trigger that wakes the loop stays
    server.socket.close()
    dispatchers = (server.task_dispatcher, health)
    deadline = time.monotonic() + grace
    while _busy(server, dispatchers) and time.monotonic() < deadline:
        wasyncore.loop(timeout=LOOP_SECONDS / 2, map=server._map, use_poll=True, count=1)
    if _busy(server, dispatchers):
        log.warning("stopped with requests unfinished after SHUTDOWN_GRACE_SECONDS=%s", grace)
    for dispatcher in dispatchers:
        dispatcher.shutdown(cancel_pending=True, timeout=1)
    wasyncore.close_all(server._map)


def serve(app):
    """Serve until SIGTERM/SIGINT, then stop gracefully, the app's background scheduler last."""
    config = app.config
    # The largest body a route reads: an upload in its form, or a feedback body if set larger.
    largest = max(MAX_REQUEST_BODY_BYTES, app.extensions["settings"].feedback_max_body_bytes)
    envelope = connection_settings(int(config["CONNECTION_IDLE_SECONDS"]), largest)
    server = waitress.create_server(
        app, host=config["HOST"], port=int(config["PORT"]), threads=int(config["THREADS"]), ident="review", **envelope
    )
    server.channel_class = _Channel
    health = _health_apart(server)
    stopping = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, _frame: stopping.set())
    log.info(
        "serving on http://%s:%s with %s threads, up to %s connections (idle ones closed after %s s)",
        config["HOST"],
        config["PORT"],
        config["THREADS"],
        envelope["connection_limit"],
        envelope["channel_timeout"],
    )
    while not stopping.is_set():
        wasyncore.loop(timeout=LOOP_SECONDS, map=server._map, use_poll=True, count=1)
    log.info("stopping: no new connections, finishing requests in flight")
    _drain(server, health, float(config["SHUTDOWN_GRACE_SECONDS"]))
    if "scheduler" in app.extensions:
        app.extensions["scheduler"].stop()
    if not db.is_closed():
        db.close()
    log.info("stopped")
