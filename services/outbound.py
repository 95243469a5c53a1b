"""Reading the body of an outbound HTTP response within an overall deadline.

requests' read timeout applies to each socket read, so a server sending a byte at a time never
trips it, and iter_content waits for whole chunks: either way a trickling peer could hold a
request thread (or the webhook sender) for as long as it keeps sending.
"""
import time
from collections.abc import Iterator
from typing import Any

import requests
from urllib3.exceptions import HTTPError, ReadTimeoutError

CHUNK = 64 * 1024


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
