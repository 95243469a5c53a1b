"""Outbound HTTP within an overall deadline: reading a response's body, a whole webhook attempt, a whole
platform call.

requests' read timeout applies to each socket read, so a peer sending a byte at a time could hold a thread
for as long as it keeps sending. `post` and `within` bound the whole attempt, headers included: at its
deadline the connection's socket is shut down, which wakes whatever read or write it is blocked in.
"""

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NameResolutionError, NewConnectionError, ReadTimeoutError

CHUNK = 64 * 1024
# One webhook attempt (connecting, sending, the reply's headers and body), all told. With the connect
# timeout it stays well below the senders' claims (60 s, services/team/sender.py and
# services/review/webhooks.py): an attempt outliving its claim would be sent again by another process.
ATTEMPT_SECONDS = 30.0
CONNECT_SECONDS = 5.0


def body_chunks(response: Any, deadline: float) -> Iterator[bytes]:
    """The body of a `stream=True` response as it arrives, until time.monotonic() passes `deadline`
    (then requests.Timeout). Transport errors come out as requests' own exceptions."""
    while chunk := _read(response, CHUNK):
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


def post(
    url: str, data: bytes | None, headers: dict[str, str], read_at_most: int = 0, method: str = "POST"
) -> tuple[int, bytes]:
    """POST (or `method`) `data`: (the reply's status, its body up to `read_at_most` + 1 bytes; none by
    default), all within ATTEMPT_SECONDS of starting. Past that, requests.Timeout; other failures are
    requests' own exceptions. No redirect is followed."""
    seconds = ATTEMPT_SECONDS
    deadline = time.monotonic() + seconds
    try:
        with within(seconds) as cut, watched_session() as session:
            with session.request(
                method,
                url,
                data=data,
                headers=headers,
                timeout=(CONNECT_SECONDS, seconds),
                allow_redirects=False,
                stream=True,
            ) as response:
                body = b""
                if read_at_most:
                    for chunk in body_chunks(response, deadline):
                        body += chunk
                        if len(body) > read_at_most:
                            break
        if cut.expired.is_set():  # cut mid-answer: http.client may take the cut for the end of the headers
            raise requests.Timeout("hung up on at the deadline")
        return response.status_code, body
    except requests.RequestException:
        if cut.expired.is_set() or time.monotonic() >= deadline:
            raise requests.Timeout(f"no complete answer within {seconds:g} s") from None
        raise


@contextlib.contextmanager
def within(seconds: float) -> Iterator["Deadline"]:
    """Every connection a watched_session() of this thread opens or sends on meanwhile is shut down once
    `seconds` pass: the whole attempt is bounded, a reply's slow headers included."""
    outer = getattr(_attempt, "deadline", None)
    cut = _attempt.deadline = Deadline(seconds)
    try:
        yield cut
    finally:
        cut.end()
        _attempt.deadline = outer


def watched_session() -> requests.Session:
    """A requests Session whose connections within() can cut (kept-alive ones too)."""
    session = requests.Session()
    session.mount("http://", _Adapter())
    session.mount("https://", _Adapter())
    return session


# ---- the deadline's hold on the connection -----------------------------------------------------------
# requests opens the connection inside session.post; these urllib3 classes (the pool's ConnectionCls,
# public extension points) tell this thread's attempt each connection they open, so the deadline can
# shut its socket, the TLS handshake and a proxy's tunnel included.
_attempt = threading.local()


def _watch(connection: HTTPConnection) -> None:
    deadline = getattr(_attempt, "deadline", None)
    if deadline is not None:
        deadline.watch(lambda: connection.sock)


class Deadline:
    """`seconds` from its start: then every connection it watches is shut down, which wakes a read or a
    write blocked on it with an error (HTTP here, SMTP in services/team/channels.py). `expired` says
    afterwards whether it came; end() stops it and lets go of what it watched."""

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.expired = threading.Event()
        self._ended = False  # end() came first: a timer already firing cuts nothing and says nothing
        self._lock = threading.Lock()
        self._watched: list[Callable[[], socket.socket | None]] = []
        self._copies: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, current: Callable[[], socket.socket | None]) -> None:
        """Watch a connection through `current`, its socket when the deadline comes (None: not yet)."""
        with self._lock:
            self._watched.append(current)
            if self.expired.is_set():  # past the deadline already: cut at once
                self._shut(current)

    def watch_socket(self, sock: socket.socket) -> None:
        """Watch a new socket through a copy of it: a TLS wrap detaches the first object (its shutdown
        would do nothing mid-handshake), while the copy shuts the connection both share. Past the
        deadline already: closed, TimeoutError."""
        with self._lock:
            if self.expired.is_set():
                sock.close()
                raise TimeoutError("the deadline passed while connecting")
            copy = sock.dup()
            self._copies.append(copy)
            self._watched.append(lambda: copy)

    def _cut(self) -> None:
        with self._lock:
            if self._ended:
                return
            self.expired.set()
            for current in self._watched:
                self._shut(current)

    @staticmethod
    def _shut(current: Callable[[], socket.socket | None]) -> None:
        sock = current()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def end(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._ended = True
            for copy in self._copies:
                copy.close()
            self._watched.clear()
            self._copies.clear()


def _watched_pool(pool: type[HTTPConnectionPool], connection: type[HTTPConnection]) -> type[HTTPConnectionPool]:
    class Watched(connection):  # type: ignore[valid-type, misc]  # the pool's own connection class
        def connect(self) -> None:
            _watch(self)
            super().connect()
            _watch(self)  # a deadline that came during the name lookup or handshake found no socket: now it does

        def _new_conn(self) -> socket.socket:
            """The name looked up within the attempt's deadline, then each address tried as urllib3 would."""
            deadline = getattr(_attempt, "deadline", None)
            if deadline is None:
                return super()._new_conn()
            name: str = self._dns_host  # type: ignore[has-type]  # urllib3 sets it in its host setter
            try:
                addresses = lookup(name, self.port, deadline.at - time.monotonic())
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, str(exc)) from None
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            failure: Exception = NewConnectionError(self, f"{name} has no address")
            for *_, address in addresses:
                self._dns_host = address[0]  # an address: urllib3's own connect, without a second lookup
                try:
                    return super()._new_conn()
                except (ConnectTimeoutError, NewConnectionError) as exc:
                    failure = exc
                finally:
                    self._dns_host = name
            raise failure

        def request(self, *args: Any, **kwargs: Any) -> Any:  # a kept-alive connection's next attempt
            _watch(self)
            return super().request(*args, **kwargs)

    return type(f"_Watched{pool.__name__}", (pool,), {"ConnectionCls": Watched})


_POOLS = {
    "http": _watched_pool(HTTPConnectionPool, HTTPConnection),
    "https": _watched_pool(HTTPSConnectionPool, HTTPSConnection),
}


def lookup(host: str, port: int, seconds: float) -> list[tuple[Any, ...]]:
    """socket.getaddrinfo(host, port) for a TCP connection within `seconds`, else TimeoutError. A blocking
    lookup cannot be cut, so it runs on a thread of its own, left to end alone (the resolver's own timeouts)."""
    answer: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()

    def run() -> None:
        try:
            answer.put((True, socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)))
        except Exception as exc:  # handed to the caller
            answer.put((False, exc))

    threading.Thread(target=run, name="name-lookup", daemon=True).start()
    try:
        found, value = answer.get(timeout=max(seconds, 0.0))
    except queue.Empty:
        raise TimeoutError(f"the name {host} was not looked up within {seconds:.3g} s") from None
    if not found:
        raise value
    return list(value)


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):  # a SOCKS proxy has pools of its own kind
            manager.pool_classes_by_scheme = _POOLS
        return manager
