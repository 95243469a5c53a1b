"""Decoding images a client sent: one set of checks for library uploads and feedback screenshots
(docs/api.md §6). The pixel count is read from the header and checked before anything is decoded, so a
decompression bomb never reaches memory.
"""

import ctypes
import io
import logging
import struct
import threading
import zlib
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

# Large images are decoded one at a time (smaller ones freely), so a burst of uploads cannot pile them up.
LARGE_PIXELS = 4_000_000
_LARGE_DECODE = threading.Lock()
_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; musl and macOS have none
FORMAT_NAMES = {"PNG": "PNG", "JPEG": "JPEG", "GIF": "GIF", "WEBP": "WebP"}
DAMAGED = (OSError, SyntaxError, ValueError, EOFError, IndexError, zlib.error)  # zlib: data not deflate


@contextmanager
def decoding(width: int, height: int) -> Iterator[None]:
    """Hold this around decoding an image of width x height pixels."""
    if width * height <= LARGE_PIXELS:
        yield
        return
    with _LARGE_DECODE:
        try:
            yield
        finally:
            give_back(width, height)


def give_back(width: int, height: int) -> None:
    """After a large image is let go, return the freed pages to the system (docs/api.md §6): glibc keeps
    what a thread freed in that thread's arena. Nothing where the C library has no malloc_trim."""
    if width * height > LARGE_PIXELS and _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


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


# Samples per pixel by PNG colour type (greyscale, RGB, palette, grey + alpha, RGBA).
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


INFLATE_STEP = 1 << 20  # image data is inflated this much at a time, counted and let go


def _png_passes(header: bytes) -> list[tuple[int, int, int]]:
    """Where an IHDR's rows lie in the inflated image data: (first byte, end, row length with its filter
    byte) of each pass that has pixels, in order (one pass, or Adam7's seven)."""
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header[:13])  # Pillow: >= 13
    bits = depth * _PNG_CHANNELS.get(colour, 4)
    passes, begin = [], 0
    for x0, y0, dx, dy in _ADAM7 if interlace else ((0, 0, 1, 1),):
        columns, rows = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if columns > 0 and rows > 0:
            stride = 1 + -(-columns * bits // 8)
            passes.append((begin, begin + rows * stride, stride))
            begin += rows * stride
    return passes


def _unknown_filter(piece: bytes, start: int, passes: list[tuple[int, int, int]]) -> bool:
    """Whether a row beginning in `piece` (inflated bytes from offset `start`) has a filter byte other than
    PNG's five (0-4); the filter bytes are picked out by slicing, not a loop over rows."""
    end = start + len(piece)
    for begin, stop, stride in passes:
        low, high = max(begin, start), min(stop, end)
        first = low + -(low - begin) % stride  # the first row start at or after `low`
        if first < high and max(piece[first - start : high - start : stride]) > 4:
            return True
    return False


def _png_data_problem(data: bytes) -> str | None:
    """What is wrong with a PNG's image data for its header: "header" (the IHDR not first, or a second
    one: Pillow reads the first, docs/api.md §6), "short" (Pillow decodes rows cut short without
    complaint and leaves them blank), "long" (more than the rows hold: a small file that inflates to
    gigabytes), "filter" (a row's filter byte is none of PNG's five), None when it fits (docs/api.md §16).
    Inflated in steps and only counted and sampled, so at most INFLATE_STEP bytes of it are held and no
    frame is decoded; a stream that is not deflate raises zlib.error."""
    if data[12:16] != b"IHDR":
        return "header"
    passes, size, pos = _png_passes(data[16 : 16 + struct.unpack(">I", data[8:12])[0]]), 0, 8
    needed = passes[-1][1] if passes else 0
    inflate = zlib.decompressobj()
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR" and pos != 8:
            return "header"
        if kind == b"IDAT":
            while body:
                piece = inflate.decompress(body, INFLATE_STEP)
                if size + len(piece) > needed:
                    return "long"
                if _unknown_filter(piece, size, passes):
                    return "filter"
                size += len(piece)
                body = inflate.unconsumed_tail
        pos += 12 + length
    piece = inflate.flush()  # input is all consumed: what is left is at most one match
    if size + len(piece) > needed:
        return "long"
    if _unknown_filter(piece, size, passes):
        return "filter"
    size += len(piece)
    return "short" if size < needed else None


def _decode_reduced(data: bytes, formats: tuple[str, ...], width: int, height: int) -> None:
    """A JPEG decoded at an eighth of its width and height (libjpeg's DCT scaling): every byte of its data is
    still read, so damage is found as in a whole decode, with 1/64 of the memory."""
    with Image.open(io.BytesIO(data), formats=formats) as image:
        image.draft(None, (max(1, width // 8), max(1, height // 8)))
        image.load()


@contextmanager
def decoded(
    data: bytes, formats: tuple[str, ...], what: str = "image", *, pixels: bool = True
) -> Iterator[Image.Image]:
    """The image of `data` in one of `formats`, every pixel of its first frame decoded; 400 naming the
    problem otherwise (also for a failure inside the `with` block, such as re-encoding).

    pixels=False when only the format and size are wanted (docs/api.md §6): a PNG (its rows checked while
    inflating) and a JPEG are then never held whole, and the image yielded for them is not loaded.
    """
    try:
        with Image.open(io.BytesIO(data), formats=formats) as image:
            kind, (width, height) = image.format, image.size
            if width < 1 or height < 1:
                refuse(f"the {what} has no pixels", "empty image")
            if width * height > MAX_PIXELS:
                refuse(
                    f"the {what} has {width}x{height} pixels, more than {MAX_PIXELS}", f"at most {MAX_PIXELS} pixels"
                )
            image.verify()
            problem = _png_data_problem(data) if image.format == "PNG" else None
            if problem == "header":
                refuse(
                    f"the {what}'s PNG header (IHDR) must come first and only once",
                    "PNG header (IHDR) repeated or not first",
                )
            if problem == "long":
                refuse(
                    f"the {what}'s pixel data is larger than its {width}x{height} pixels hold",
                    "pixel data larger than its size",
                )
            if problem in ("short", "filter"):
                raise OSError(f"PNG image data: {problem}")
        if not pixels and kind in ("PNG", "JPEG", "MPO"):
            if kind != "PNG":
                _decode_reduced(data, formats, width, height)
            with Image.open(io.BytesIO(data), formats=formats) as image:
                yield image
            return
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
