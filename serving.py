"""Serving the app with waitress (CONTRACT §1, §11): `python app.py` ends here.

SIGTERM or SIGINT stops accepting connections at once; requests in flight finish and their answers
are sent (up to SHUTDOWN_GRACE_SECONDS: a publish in flight completes and its job is recorded),
then the background threads stop and the process exits 0. waitress writes answers from its main
loop, so the loop keeps running while the requests drain instead of being interrupted.
"""
import logging
import resource
import signal
import threading
import time

import waitress
from waitress import wasyncore

from models import db

log = logging.getLogger("review")
LOOP_SECONDS = 0.2  # how soon a stop request is noticed
RESERVED_FILES = 128  # open files kept for the database, uploads, logs and outbound calls
WANTED_FILES = 65536


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


def connection_settings(idle_seconds: int) -> dict:
    """waitress's connection envelope (CONTRACT §11). Its defaults (100 connections, idle ones kept
    120 s) let 100 idle sockets lock every client out. Connections are cheap here: waitress reads
    headers in its poll loop, so an idle or slow connection holds no worker thread, only a file."""
    return {
        "connection_limit": max(100, open_file_limit() - RESERVED_FILES),
        "channel_timeout": idle_seconds,  # an idle keep-alive connection is closed after this
        "cleanup_interval": max(1, min(30, idle_seconds // 2)),  # how often idle ones are looked for
        "asyncore_use_poll": True,  # select() stops at 1,024 file descriptors
    }


def _busy(server):
    """Requests being read, queued, run or answered."""
    dispatcher = server.task_dispatcher
    with dispatcher.lock:
        if dispatcher.queue or dispatcher.active_count:
            return True
    return any(getattr(channel, "requests", None) or getattr(channel, "total_outbufs_len", 0)
               for channel in list(server._map.values()))


def _drain(server, grace):
    """Stop accepting; keep answering what is in flight until it is done or `grace` seconds pass."""
    server.accepting = False
    server.del_channel()  # out of the loop's map; the trigger that wakes the loop stays
    server.socket.close()
    deadline = time.monotonic() + grace
    while _busy(server) and time.monotonic() < deadline:
        wasyncore.loop(timeout=LOOP_SECONDS / 2, map=server._map, use_poll=True, count=1)
    if _busy(server):
        log.warning("stopped with requests unfinished after SHUTDOWN_GRACE_SECONDS=%s", grace)
    server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)
    wasyncore.close_all(server._map)


def serve(app, workers=()):
    """Serve until SIGTERM/SIGINT, then stop gracefully; `workers` are the app's background threads."""
    config = app.config
    envelope = connection_settings(int(config["CONNECTION_IDLE_SECONDS"]))
    server = waitress.create_server(app, host=config["HOST"], port=int(config["PORT"]),
                                    threads=int(config["THREADS"]), ident="review", **envelope)
    stopping = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, _frame: stopping.set())
    log.info("serving on http://%s:%s with %s threads, up to %s connections (idle ones closed after %s s)",
             config["HOST"], config["PORT"], config["THREADS"], envelope["connection_limit"],
             envelope["channel_timeout"])
    while not stopping.is_set():
        wasyncore.loop(timeout=LOOP_SECONDS, map=server._map, use_poll=True, count=1)
    log.info("stopping: no new connections, finishing requests in flight")
    _drain(server, float(config["SHUTDOWN_GRACE_SECONDS"]))
    for worker in workers:
        worker.stop()
    if not db.is_closed():
        db.close()
    log.info("stopped")
