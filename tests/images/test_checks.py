"""What an uploaded image must be before anything uses it (services/images/checks.py): one of the formats
asked for, within the pixel and byte limits, whole; each refusal names the problem (docs/api.md §6)."""

import io
import struct
import zlib

import pytest
from PIL import Image

from rules.limits import MAX_PIXELS
from services.errors import PayloadTooLarge, ServiceError
from services.images.checks import check_size, decoded

FORMATS = ("PNG", "JPEG")


def _png(size=(60, 40)):
    out = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(out, "PNG")
    return out.getvalue()


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _refusal(data, formats=FORMATS, **options):
    with pytest.raises(ServiceError) as refused, decoded(data, formats, **options):
        pass
    return refused.value.details["file"][0]


def test_a_whole_image_of_an_asked_format_passes():
    with decoded(_png(), FORMATS) as image:
        assert (image.format, image.size) == ("PNG", (60, 40))


def test_refusals_name_the_problem():
    assert "not a" in _refusal(b"GIF89a not really")
    assert "not a" in _refusal(_png(), formats=("JPEG",))  # a PNG where only JPEG is taken
    assert "truncated or damaged" in _refusal(_png()[:-30])
    # A header claiming more pixels than allowed is refused before a pixel is decoded.
    side = int(MAX_PIXELS**0.5) + 10
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
    bomb = b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", zlib.compress(b"\0" * 64)) + _chunk(b"IEND", b"")
    assert str(MAX_PIXELS) in _refusal(bomb)


def test_size_is_checked_before_decoding():
    check_size(b"x" * 10, 10, "image")
    with pytest.raises(PayloadTooLarge):
        check_size(b"x" * 11, 10, "image")
