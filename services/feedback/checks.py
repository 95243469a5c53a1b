"""What an attachment file must be (docs/api.md §9). A screenshot's size is read from the header before any
pixel is decoded (a decompression bomb never reaches memory); it is re-encoded from the pixels alone, EXIF
orientation applied first, so EXIF (GPS, camera), text chunks and profiles are gone.
"""

import io
import logging
import zipfile
from dataclasses import dataclass

from PIL import ImageOps

from rules.limits import LOG_MAX_BYTES, SCREENSHOT_MAX_BYTES
from services.images.checks import check_size, decoded, refuse

log = logging.getLogger(__name__)

SCREENSHOT_FORMATS = {"PNG": ("png", "image/png"), "JPEG": ("jpg", "image/jpeg"), "WEBP": ("webp", "image/webp")}
LOG_TYPES = {
    "log": "text/plain; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "zip": "application/zip",
    "gz": "application/gzip",
}
# Every Content-Type an attachment download can carry (documented in the OpenAPI document).
ATTACHMENT_MEDIA_TYPES = tuple(dict.fromkeys([t for _, t in SCREENSHOT_FORMATS.values()] + list(LOG_TYPES.values())))
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class CheckedFile:
    data: bytes  # what is stored
    extension: str
    content_type: str


def check_screenshot(data: bytes) -> CheckedFile:
    """PNG/JPEG/WebP bytes -> CheckedFile with the re-encoded image (no metadata)."""
    check_size(data, SCREENSHOT_MAX_BYTES, "screenshot")
    with decoded(data, tuple(SCREENSHOT_FORMATS), "screenshot") as image:
        image_format = image.format
        clean = _pixels_only(image, image_format)
    extension, content_type = SCREENSHOT_FORMATS[str(image_format)]
    return CheckedFile(clean, extension, content_type)


def _pixels_only(image, image_format):
    """Re-encode the decoded pixels with no metadata. Works in place where it can, so a large screenshot is
    held about once in memory, not three times."""
    ImageOps.exif_transpose(image, in_place=True)
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if has_alpha else "RGB")
    if image_format == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    image.info.clear()  # savers read ICC profiles, EXIF and text from here when not told otherwise
    out = io.BytesIO()
    if image_format == "JPEG":
        image.save(out, "JPEG", quality=90, optimize=True, exif=b"")
    elif image_format == "WEBP":
        image.save(out, "WEBP", quality=90, exif=b"")
    else:
        image.save(out, "PNG", optimize=False)
    return out.getvalue()


def check_log_file(file_name: str | None, data: bytes) -> CheckedFile:
    """A log file, judged by its extension and its content -> CheckedFile (stored unchanged)."""
    name = str(file_name or "").lower()
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    if extension not in LOG_TYPES:
        refuse("a log file must be named .log, .txt, .zip or .gz", "extension must be .log, .txt, .zip or .gz")
    check_size(data, LOG_MAX_BYTES, "log file")
    if extension in ("log", "txt"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            refuse("a .log or .txt file must be UTF-8 text", "not UTF-8 text")
        if "\x00" in text:
            refuse("a .log or .txt file must be text, but it contains NUL bytes", "contains NUL bytes")
    elif extension == "zip":
        _check_zip(data)
    elif not data.startswith(GZIP_MAGIC):
        refuse("a .gz file must be gzip-compressed data", "not gzip data")
    return CheckedFile(data, extension, LOG_TYPES[extension])


def _check_zip(data):
    buffer = io.BytesIO(data)
    if not zipfile.is_zipfile(buffer):
        refuse("a .zip file must be a ZIP archive", "not a ZIP archive")
    try:
        with zipfile.ZipFile(buffer) as archive:
            archive.infolist()  # the central directory parses
    except (zipfile.BadZipFile, OSError, ValueError):
        refuse("the .zip archive is damaged", "damaged ZIP archive")
