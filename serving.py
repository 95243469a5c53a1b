"""Serving the app with waitress (CONTRACT §1, §11): `python app.py` ends here.

SIGTERM or SIGINT stops accepting connections at once; requests in flight finish and their answers
are sent (up to SHUTDOWN_GRACE_SECONDS: a publish in flight completes and its job is recorded),
then the background threads stop and the process exits 0. waitress writes answers from its main
loop, so the loop keeps running while the requests drain instead of being interrupted.
"""
import logging
import signal
import threading
import time

import waitress
from waitress import wasyncore

from models import db

log = logging.getLogger("review")
LOOP_SECONDS = 0.2  # how soon a stop request is noticed


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
    server = waitress.create_server(app, host=config["HOST"], port=int(config["PORT"]),
                                    threads=int(config["THREADS"]), ident="review")
    stopping = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, _frame: stopping.set())
    log.info("serving on http://%s:%s with %s threads", config["HOST"], config["PORT"], config["THREADS"])
    while not stopping.is_set():
        wasyncore.loop(timeout=LOOP_SECONDS, map=server._map, use_poll=True, count=1)
    log.info("stopping: no new connections, finishing requests in flight")
    _drain(server, float(config["SHUTDOWN_GRACE_SECONDS"]))
    for worker in workers:
        worker.stop()
    if not db.is_closed():
        db.close()
    log.info("stopped")
