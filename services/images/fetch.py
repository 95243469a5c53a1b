"""Fetching a remote image (package export, publishing), guarded against SSRF: the rules are
docs/package-and-delete.md "Remote images". `allow_private=True` lifts the address rule only (the host
must still be in the allow list): for an image host on the operator's own network, and for tests.
"""

import contextlib
import io
import ipaddress
import os
import socket
import time
from functools import lru_cache
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from rules.client_input import whole_number
from services.outbound import body_chunks

MAX_BYTES = 10 * 1024 * 1024
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 10.0
TOTAL_SECONDS = 30.0
MAX_REDIRECTS = 3


class FetchRefused(Exception):
    """The image could not or may not be fetched; str() is one line for a person."""


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def address_allowed(address: Any, allow_private: bool = False) -> bool:
    """A public unicast address (or any address when allow_private)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):  # an IPv4 address inside (mapped, 6to4, NAT64) is what is reached
        nat64 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None
        ip = ip.ipv4_mapped or ip.sixtofour or nat64 or ip
    if allow_private:
        return not ip.is_unspecified
    return ip.is_global and not (
        ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_multicast or ip.is_unspecified
    )


def check_url(url: str, allowed_hosts: Any, allow_private: bool = False) -> tuple[str, int]:
    """Raise FetchRefused unless `url` may be fetched; returns (host, port)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise FetchRefused(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise FetchRefused("only http and https image URLs can be fetched")
    if parts.username is not None or parts.password is not None:
        raise FetchRefused("image URLs with credentials are not fetched")
    host = (parts.hostname or "").rstrip(".").lower()
    allowed = {h.strip().rstrip(".").lower() for h in allowed_hosts if h.strip()}
    if not host or host not in allowed:
        raise FetchRefused(f"host {host or '(none)'} is not in REVIEW_REMOTE_IMAGE_HOSTS")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchRefused(f"host {host} cannot be resolved ({exc})") from None
    for info in infos:
        if not address_allowed(info[4][0], allow_private):
            raise FetchRefused(f"host {host} resolves to a non-public address ({info[4][0]})")
    return host, port


def _checked_connection(base, allow_private):
    class Checked(base):  # type: ignore[valid-type, misc]  # the pool's own connection class
        def _new_conn(self):
            sock = super()._new_conn()
            peer = sock.getpeername()[0]
            if not address_allowed(peer, allow_private):
                sock.close()
                raise OSError(f"connected to a non-public address ({peer}); refused")
            return sock

    return Checked


@lru_cache(maxsize=2)
def _pool_classes(allow_private):
    http_pool = type(
        "CheckedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": _checked_connection(HTTPConnection, allow_private)}
    )
    https_pool = type(
        "CheckedHTTPSPool",
        (HTTPSConnectionPool,),
        {"ConnectionCls": _checked_connection(HTTPSConnection, allow_private)},
    )
    return {"http": http_pool, "https": https_pool}


class _CheckedAdapter(HTTPAdapter):
    def __init__(self, allow_private):
        self._allow_private = allow_private
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self._allow_private)


def _session(allow_private):
    session = requests.Session()
    session.trust_env = False  # no environment proxies, no .netrc credentials
    adapter = _CheckedAdapter(allow_private)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def fetch_to_file(url: str, path: str | os.PathLike, **limits: Any) -> int:
    """Stream the image at `url` into the file `path` (created only once the host answers 200)."""
    return _fetch(url, lambda: open(path, "wb"), **limits)


def fetch_bytes(url: str, **limits: Any) -> bytes:
    """The image at `url` as bytes, with the same checks and limits as fetch_to_file."""
    sink = io.BytesIO()
    _fetch(url, lambda: contextlib.nullcontext(sink), **limits)
    return sink.getvalue()


def _fetch(
    url,
    open_sink,
    *,
    allowed_hosts,
    allow_private=False,
    max_bytes=MAX_BYTES,
    timeout=(CONNECT_TIMEOUT, READ_TIMEOUT),
    total_seconds=TOTAL_SECONDS,
):
    """Stream the image at `url` into the writable `open_sink()`; returns its size, or FetchRefused."""
    deadline = time.monotonic() + total_seconds
    with _session(allow_private) as session:
        for _hop in range(MAX_REDIRECTS + 1):
            check_url(url, allowed_hosts, allow_private)
            try:
                response = session.get(
                    url,
                    stream=True,
                    allow_redirects=False,
                    timeout=timeout,
                    headers={"Accept": "image/*", "Accept-Encoding": "identity"},
                )
            except requests.RequestException as exc:
                raise FetchRefused(f"the image could not be fetched ({type(exc).__name__})") from None
            with response:
                if response.is_redirect:
                    url = urljoin(url, response.headers.get("Location", ""))
                    continue
                if response.status_code != 200:
                    raise FetchRefused(f"the image host answered HTTP {response.status_code}")
                declared = whole_number(response.headers.get("Content-Length", ""))
                if declared is not None and declared > max_bytes:
                    raise FetchRefused(f"the image is larger than {max_bytes // (1024 * 1024)} MiB")
                with open_sink() as sink:
                    return _stream(response, sink, max_bytes, deadline)
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")


def _stream(response, sink, max_bytes, deadline):
    size = 0
    try:
        for chunk in body_chunks(response, deadline):
            size += len(chunk)
            if size > max_bytes:
                raise FetchRefused(f"the image is larger than {max_bytes // (1024 * 1024)} MiB")
            sink.write(chunk)
    except requests.Timeout:
        raise FetchRefused("the image took too long to download") from None
    except requests.RequestException as exc:
        raise FetchRefused(f"the image download broke off ({type(exc).__name__})") from None
    return size
