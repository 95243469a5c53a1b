"""Outbound HTTP within an overall deadline: reading a response's body, and a whole webhook attempt.

requests' read timeout applies to each socket read, so a server sending a byte at a time never
trips it, and iter_content waits for whole chunks: either way a trickling peer could hold a
request thread (or a webhook sender) for as long as it keeps sending. `post` bounds the whole
attempt, headers included: at its deadline the connection's socket is shut down, which wakes
whatever read or write it is blocked in.
"""
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import HTTPError, ReadTimeoutError

CHUNK = 64 * 1024
# One webhook attempt (connecting, sending, the reply's headers and body), all told. With the connect
# timeout it stays well below the senders' claims (60 s, services/team/sender.py and
# services/review/webhooks.py): an attempt outliving its claim would be sent again by another process.
ATTEMPT_SECONDS = 30.0
CONNECT_SECONDS = 5.0


def body_chunks(response: Any, deadline: float, size: int = CHUNK) -> Iterator[bytes]:
    """The body of a `stream=True` response as it arrives, until time.monotonic() passes `deadline`
    (then requests.Timeout). Transport errors come out as requests' own exceptions."""
    while chunk := _read(response, size):
        if time.monotonic() > deadline:
            raise requests.Timeout("the response took longer than its deadline")
        yield chunk


def _read(response, size):
    """What has arrived (read1: iter_content would wait for a whole chunk)."""
    try:
        return response.raw.read1(size, decode_content=True)
    except ReadTimeoutError as exc:
        raise requests.Timeout(str(exc)) from None
    except (HTTPError, OSError) as exc:
        raise requests.ConnectionError(str(exc)) from None


def post(url: str, data: bytes, headers: dict[str, str], read_at_most: int = 0) -> tuple[int, bytes]:
    """POST `data`: (the reply's status, its body up to `read_at_most` + 1 bytes; none by default),
    all within ATTEMPT_SECONDS of starting. Past that, requests.Timeout; other failures are requests'
    own exceptions. No redirect is followed."""
    seconds = ATTEMPT_SECONDS
    deadline = time.monotonic() + seconds
    connections: list[HTTPConnection] = []
    _attempt.connections = connections
    hung_up = threading.Event()
    cut = threading.Timer(seconds, _hang_up, (connections, hung_up))
    cut.daemon = True
    cut.start()
    try:
        with requests.Session() as session:
            session.mount("http://", _Adapter())
            session.mount("https://", _Adapter())
            with session.post(url, data=data, headers=headers, timeout=(CONNECT_SECONDS, seconds),
                              allow_redirects=False, stream=True) as response:
                body = b""
                if read_at_most:
                    for chunk in body_chunks(response, deadline):
                        body += chunk
                        if len(body) > read_at_most:
                            break
        if hung_up.is_set():  # cut mid-answer: http.client may take the cut for the end of the headers
            raise requests.Timeout("hung up on at the deadline")
        return response.status_code, body
    except requests.RequestException:
        if hung_up.is_set() or time.monotonic() >= deadline:
            raise requests.Timeout(f"no complete answer within {seconds:g} s") from None
        raise
    finally:
        cut.cancel()
        _attempt.connections = None


# ---- the deadline's hold on the connection -----------------------------------------------------------
# requests opens the connection inside session.post; these urllib3 classes (the pool's ConnectionCls,
# public extension points) tell this thread's attempt each connection they open, so the deadline can
# shut its socket, the TLS handshake and a proxy's tunnel included.
_attempt = threading.local()


def _watch(connection: HTTPConnection) -> None:
    connections = getattr(_attempt, "connections", None)
    if connections is not None:
        connections.append(connection)


def _hang_up(connections: list[HTTPConnection], hung_up: threading.Event) -> None:
    hung_up.set()
    for connection in connections:
        if connection.sock is not None:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)


class _WatchedHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        _watch(self)
        super().connect()


class _WatchedHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        _watch(self)
        super().connect()


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):  # a SOCKS proxy has pools of its own kind
            manager.pool_classes_by_scheme = _POOLS
        return manager
