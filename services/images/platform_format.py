"""Body images the platform accepts: re-encoding for media/uploadimg (jpg/png, at most 1 MB), kinds, upload names."""

import io
import re

from PIL import Image, ImageOps, UnidentifiedImageError

BODY_IMAGE_MAX = 1024 * 1024
_JPEG_QUALITIES = (90, 82, 72, 62)
_LOSSLESS_SOURCES = {"PNG", "GIF", "BMP", "TIFF"}


def prepare_body_image(data: bytes, max_bytes: int = BODY_IMAGE_MAX) -> tuple[bytes, str, str]:
    """(data, content_type, ext) ready for uploadimg: a jpg/png within the limit untouched, anything else
    re-encoded (first frame only) and downscaled until it fits. ValueError for data that is no image."""
    try:
        image: Image.Image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ValueError(f"body image cannot be read as an image ({type(exc).__name__})") from None
    source_format = image.format
    if source_format == "JPEG" and len(data) <= max_bytes:
        return data, "image/jpeg", "jpg"
    if source_format == "PNG" and len(data) <= max_bytes:
        return data, "image/png", "png"

    image = ImageOps.exif_transpose(image)
    if _has_transparency(image):
        image = image.convert("RGBA")
        while True:
            encoded = _encode(image, "PNG")
            if len(encoded) <= max_bytes:
                return encoded, "image/png", "png"
            image = _shrink(image, len(encoded), max_bytes)

    image = image.convert("RGB")
    if source_format in _LOSSLESS_SOURCES:
        encoded = _encode(image, "PNG")
        if len(encoded) <= max_bytes:
            return encoded, "image/png", "png"
    while True:
        for quality in _JPEG_QUALITIES:
            encoded = _encode(image, "JPEG", quality=quality)
            if len(encoded) <= max_bytes:
                return encoded, "image/jpeg", "jpg"
        image = _shrink(image, len(encoded), max_bytes)


def _has_transparency(image):
    if image.mode == "P":
        if "transparency" not in image.info:
            return False
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        return image.getchannel("A").getextrema()[0] < 255
    return False


def _encode(image, fmt, **options):
    out = io.BytesIO()
    if fmt == "JPEG":
        image.save(out, "JPEG", optimize=True, progressive=True, **options)
    else:
        image.save(out, "PNG", optimize=True)
    return out.getvalue()


def _shrink(image, size, max_bytes):
    """Scale down by roughly the factor that brings `size` under max_bytes (never below 16 px)."""
    factor = max(0.5, min(0.9, (max_bytes / size) ** 0.5 * 0.95))
    width, height = round(image.width * factor), round(image.height * factor)
    if min(width, height) < 16:
        raise ValueError("body image cannot be made small enough for the platform (1 MB)")
    return image.resize((width, height), Image.Resampling.LANCZOS)


_MAGIC = (
    (b"\xff\xd8\xff", "jpg"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"BM", "bmp"),
)
KIND_TYPES = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "bmp": "image/bmp"}


def image_kind(data: bytes) -> str | None:
    """'jpg', 'png', 'gif' or 'bmp' from the first bytes; None for anything else."""
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


def upload_name(filename: str | None, kind: str | None) -> str:
    """A plain ASCII file name for the multipart header, ending in the image's own extension: the platform
    refuses a name without one (40113), as a name of CJK letters alone or a material's media_id would be."""
    stem, dot, ext = (filename or "").rsplit("/", 1)[-1].rpartition(".")
    if not dot:
        stem, ext = ext, ""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_-") or "image"
    ext = kind or re.sub(r"[^A-Za-z0-9]+", "", ext).lower()
    return f"{stem}.{ext}" if ext else stem
