"""Checking an image file before it goes into a package: inside its folder, small enough, decodable."""

import os
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

import services.images.checks  # noqa: F401  (sets Image.MAX_IMAGE_PIXELS to the upload limit)
from rules.limits import MAX_PIXELS
from services.files import inside

MAX_BYTES = 10 * 1024 * 1024
FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "MPO": "jpg", "GIF": "gif", "WEBP": "webp"}


class FaultyImage(Exception):
    """str() says what is wrong with the image, for `details.faultyImages[].reason`."""


def open_local(path: str | os.PathLike, root: str | os.PathLike) -> BinaryIO:
    """The stored file, opened for reading, after checking that it stays inside `root` and is a file."""
    if not inside(path, root):
        raise FaultyImage("the stored file lies outside the uploads folder")
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        raise FaultyImage("the stored file is missing")
    try:
        return open(real, "rb")  # the caller's `with` closes it
    except FileNotFoundError:
        raise FaultyImage("the stored file is missing") from None


def check_decodable(file: BinaryIO) -> str:
    """The extension (png/jpg/gif/webp) of the open image `file` when it decodes; FaultyImage otherwise.

    verify() checks a PNG's every chunk CRC; JPEG, GIF and WebP have no such check in Pillow, so their
    pixels are decoded too (JPEG at 1/8 scale: draft mode still reads every entropy-coded byte).
    """
    try:
        if os.fstat(file.fileno()).st_size > MAX_BYTES:
            raise FaultyImage(f"the image is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        file.seek(0)
        with Image.open(file, formats=FORMATS) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise FaultyImage(f"the image has more than {MAX_PIXELS} pixels")
            image_format = image.format
            image.verify()
        if image_format != "PNG":
            file.seek(0)
            with Image.open(file, formats=FORMATS) as image:
                if image_format in ("JPEG", "MPO"):
                    image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
                image.load()
    except FaultyImage:
        raise
    except UnidentifiedImageError:
        raise FaultyImage("the file is not a PNG, JPEG, GIF or WebP image") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise FaultyImage(f"the image has more than {MAX_PIXELS} pixels") from None
    except (OSError, SyntaxError, ValueError, EOFError, IndexError, MemoryError):
        raise FaultyImage("the image is truncated or damaged and cannot be decoded") from None
    return EXTENSIONS[str(image_format)]
