"""Decoding images a client sent: one set of checks for library uploads and feedback screenshots.

The pixel count is read from the header and checked before anything is decoded, so a
decompression bomb never reaches memory; verify() checks the structure (a PNG cut before IEND
fails), then every pixel of the first frame is decoded.
"""
import io
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from PIL import Image, UnidentifiedImageError

from rules.limits import MAX_PIXELS, mib
from services.errors import PayloadTooLarge, ValidationFailed

log = logging.getLogger(__name__)

# Pillow itself refuses (DecompressionBombError) anything over twice this before decoding; the
# header check below refuses everything over MAX_PIXELS before a single pixel is decoded.
if Image.MAX_IMAGE_PIXELS is None or Image.MAX_IMAGE_PIXELS > MAX_PIXELS:
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS

# Large images are decoded one at a time (smaller ones freely): eight uploads of 40-megapixel images
# decoded at once took the process to 1.3 GB.
LARGE_PIXELS = 4_000_000
_LARGE_DECODE = threading.Lock()
FORMAT_NAMES = {"PNG": "PNG", "JPEG": "JPEG", "GIF": "GIF", "WEBP": "WebP"}
DAMAGED = (OSError, SyntaxError, ValueError, EOFError, IndexError)


@contextmanager
def decoding(width: int, height: int) -> Iterator[None]:
    """Hold this around decoding an image of width x height pixels."""
    if width * height <= LARGE_PIXELS:
        yield
        return
    with _LARGE_DECODE:
        yield


def refuse(message: str, reason: str) -> NoReturn:
    raise ValidationFailed(message, {"file": [reason]})


def check_size(data: bytes, limit: int, what: str) -> None:
    """413 over `limit` bytes, 400 when empty."""
    if len(data) > limit:
        raise PayloadTooLarge(f"the {what} is larger than {mib(limit)}", {"file": [f"at most {limit} bytes"]})
    if not data:
        refuse("the file is empty", "empty file")


def _names(formats):
    names = [FORMAT_NAMES[name] for name in formats]
    return ", ".join(names[:-1]) + " or " + names[-1]


@contextmanager
def decoded(data: bytes, formats: tuple[str, ...], what: str = "image") -> Iterator[Image.Image]:
    """The image of `data` in one of `formats`, every pixel of its first frame decoded; 400 naming the
    problem otherwise (also for a failure inside the `with` block, such as re-encoding)."""
    try:
        with Image.open(io.BytesIO(data), formats=formats) as image:
            width, height = image.size
            if width < 1 or height < 1:
                refuse(f"the {what} has no pixels", "empty image")
            if width * height > MAX_PIXELS:
                refuse(f"the {what} has {width}x{height} pixels, more than {MAX_PIXELS}",
                       f"at most {MAX_PIXELS} pixels")
            image.verify()
        with decoding(width, height), Image.open(io.BytesIO(data), formats=formats) as image:
            image.load()
            yield image
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        refuse(f"the {what} has more than {MAX_PIXELS} pixels", f"at most {MAX_PIXELS} pixels")
    except UnidentifiedImageError:
        refuse(f"the file is not a {_names(formats)} image", f"not a {_names(formats)} image")
    except DAMAGED as exc:
        log.info("%s refused: %s: %s", what, type(exc).__name__, exc)
        refuse(f"the {what} is truncated or damaged and cannot be decoded", "truncated or damaged image")
