"""A PNG has one header, first (docs/api.md §6): a second IHDR (Pillow reads the first, the inflation check
read the last) or an IHDR after another chunk is a 400 on both upload routes; and the rows of a PNG are
judged without decoding it, so a row whose filter byte names no filter is refused as damaged."""

import io
import struct
import zlib

import pytest

from models import Asset, db
from tests.helpers.app import assert_error
from tests.helpers.feedback import created, upload

SIGNATURE = b"\x89PNG\r\n\x1a\n"
REASON = "PNG header (IHDR) repeated or not first"


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def header(width, height, depth=8, colour=0):
    return chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))


def grey_rows(width, height, filter_byte=0):
    return b"".join(bytes([filter_byte]) + b"\x80" * width for _ in range(height))


PILLOWS = header(6000, 6000)  # what Pillow reads: 36 megapixels
SMALL_DATA = chunk(b"IDAT", zlib.compress(grey_rows(1, 1)))  # what the inflation check was shown: 1x1
END = chunk(b"IEND", b"")
HOSTILE = {
    "second IHDR": SIGNATURE + PILLOWS + header(1, 1) + SMALL_DATA + END,
    "second IHDR after the data": SIGNATURE + header(1, 1) + SMALL_DATA + header(6000, 6000) + END,
    "IHDR not first": SIGNATURE + chunk(b"tEXt", b"Comment\0hi") + header(1, 1) + SMALL_DATA + END,
}


def _send_asset(client, headers, data):
    return client.post(
        "/api/assets/upload",
        headers=headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(data), "x.png")},
    )


@pytest.mark.parametrize("name", HOSTILE)
def test_a_png_with_a_second_or_late_header_is_refused(client, agent_headers, name):
    response = _send_asset(client, agent_headers, HOSTILE[name])
    assert response.status_code == 400, (name, response.status_code, response.get_json())
    error = assert_error(response, 400, "validation_error")
    assert error["details"] == {"file": [REASON]}, error
    with db.connection_context():
        assert Asset.select().count() == 0


@pytest.mark.parametrize("name", ["second IHDR", "IHDR not first"])
def test_a_screenshot_with_a_second_or_late_header_is_refused(fb_client, name):
    record = created(fb_client)
    error = assert_error(upload(fb_client, record["id"], HOSTILE[name], "s.png", "screenshot"), 400, "validation_error")
    assert error["details"] == {"file": [REASON]}, error


@pytest.mark.parametrize("filter_byte", [5, 255])
def test_a_row_with_an_unknown_filter_is_refused(client, agent_headers, filter_byte):
    rows = grey_rows(7, 5)
    rows = rows[:16] + bytes([filter_byte]) + rows[17:]  # the third row's filter byte
    data = SIGNATURE + header(7, 5) + chunk(b"IDAT", zlib.compress(rows)) + END
    error = assert_error(_send_asset(client, agent_headers, data), 400, "validation_error")
    assert error["details"] == {"file": ["truncated or damaged image"]}, error


@pytest.mark.parametrize("filter_byte", [0, 1, 2, 3, 4])
def test_every_png_filter_is_accepted(client, agent_headers, filter_byte):
    data = SIGNATURE + header(7, 5) + chunk(b"IDAT", zlib.compress(grey_rows(7, 5, filter_byte))) + END
    response = _send_asset(client, agent_headers, data)
    assert response.status_code == 201, response.get_json()
    assert (response.get_json()["width"], response.get_json()["height"]) == (7, 5)


@pytest.mark.parametrize(("offset", "accepted"), [(11, False), (12, True), (7, False), (8, True)])
def test_filter_bytes_are_found_in_every_interlaced_pass(client, agent_headers, offset, accepted):
    """3x3 greyscale, Adam7: passes of 1x1, 1x1, 2x1, 1x2 and 3x1 pixels; their rows start at bytes 0, 2,
    4, 7, 9 and 11 of the 15. A 5 there is an unknown filter; a 5 in a pixel is a pixel."""
    rows = bytearray(15)
    rows[offset] = 5
    data = (
        SIGNATURE
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 3, 8, 0, 0, 0, 1))
        + chunk(b"IDAT", zlib.compress(bytes(rows)))
        + END
    )
    response = _send_asset(client, agent_headers, data)
    if accepted:
        assert response.status_code == 201, response.get_json()
    else:
        assert assert_error(response, 400, "validation_error")["details"] == {"file": ["truncated or damaged image"]}
