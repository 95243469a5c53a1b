"""Image data measured in bounded steps (docs/api.md §16, bad input): a small PNG that inflates to a
gigabyte is refused without the served process holding more than a few MiB for it, and image data
that is not a deflate stream is a 400, on both upload routes."""

import io
import struct
import zlib

import pytest
import requests
from PIL import Image

from tests.helpers.app import assert_error
from tests.helpers.feedback import created, image_bytes, upload
from tests.helpers.served import AGENT, CLIENT, peak_memory, served_process

BOMB_INFLATED = 1 << 30  # a 1x1 image whose pixel data inflates to 1 GiB (about 1 MB compressed)
GROWTH_ALLOWED = 64 * 1024 * 1024


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width, height, idat, depth=8, colour=0):
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def bomb():
    """1x1 greyscale, one IDAT chunk of zeros that inflates to BOMB_INFLATED bytes (needs 2)."""
    packer, block = zlib.compressobj(9), b"\0" * (1 << 20)
    idat = b"".join(packer.compress(block) for _ in range(BOMB_INFLATED // len(block))) + packer.flush()
    data = png(1, 1, idat)
    assert len(data) < 1_100_000
    return data


NOT_DEFLATE = png(1, 1, b"this is not a deflate stream at all")  # CRC correct: only the data is wrong


def _assert_refused(response, reason):
    assert response.status_code == 400, (response.status_code, response.text[:300])
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"} and error["code"] == "validation_error", error
    assert error["details"] == {"file": [reason]}, error


def test_a_png_bomb_is_refused_without_the_memory_it_inflates_to(tmp_path, bomb):
    with served_process(tmp_path) as (base, server):
        warm = requests.post(
            f"{base}/api/assets/upload",
            headers=AGENT,
            timeout=30,
            files={"file": ("warm.png", image_bytes("PNG"), "image/png")},
        )
        assert warm.status_code == 201, warm.text  # Pillow and the upload path loaded before measuring
        record = requests.post(
            f"{base}/api/feedbacks",
            headers=CLIENT,
            timeout=30,
            json={"type": "bug", "title": "t", "content": "c", "appName": "a", "appVersion": "1", "platform": "ios"},
        )
        assert record.status_code == 201, record.text
        attached = requests.post(
            f"{base}/api/feedbacks/{record.json()['id']}/attachments",
            headers=CLIENT,
            timeout=30,
            data={"kind": "screenshot"},
            files={"file": ("warm.png", image_bytes("PNG"), "image/png")},
        )
        assert attached.status_code == 201, attached.text
        before = peak_memory(server.pid)

        asset = requests.post(
            f"{base}/api/assets/upload", headers=AGENT, timeout=60, files={"file": ("bomb.png", bomb, "image/png")}
        )
        _assert_refused(asset, "pixel data larger than its size")
        screenshot = requests.post(
            f"{base}/api/feedbacks/{record.json()['id']}/attachments",
            headers=CLIENT,
            timeout=60,
            data={"kind": "screenshot"},
            files={"file": ("bomb.png", bomb, "image/png")},
        )
        _assert_refused(screenshot, "pixel data larger than its size")

        grown = peak_memory(server.pid) - before
        assert grown < GROWTH_ALLOWED, f"peak memory grew by {grown // (1024 * 1024)} MiB"
        listed = requests.get(f"{base}/api/assets?scope=all", headers=AGENT, timeout=30).json()
        assert [item["fileName"] for item in listed["items"]] == ["warm.png"]  # nothing of the bomb stored


@pytest.mark.parametrize(
    "data", [NOT_DEFLATE, png(1, 1, zlib.compress(b"\0\0")[:-4] + b"\0\0\0\0")], ids=["not deflate", "wrong adler32"]
)
def test_image_data_that_is_not_deflate_is_a_400(client, agent_headers, data):
    response = client.post(
        "/api/assets/upload",
        headers=agent_headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(data), "odd.png")},
    )
    error = assert_error(response, 400, "validation_error")
    assert error["details"] == {"file": ["truncated or damaged image"]}


def test_a_screenshot_whose_data_is_not_deflate_is_a_400(fb_client):
    record = created(fb_client)
    error = assert_error(upload(fb_client, record["id"], NOT_DEFLATE, "odd.png", "screenshot"), 400, "validation_error")
    assert error["details"] == {"file": ["truncated or damaged image"]}


def _idat(data):
    """A PNG's chunks before its image data, the inflated image data, the chunks after it."""
    pos, head, tail, packed = 8, [data[:8]], [], b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"IDAT":
            packed += data[pos + 8 : pos + 8 + length]
        else:
            (tail if packed else head).append(data[pos : pos + 12 + length])
        pos += 12 + length
    return b"".join(head), zlib.decompress(packed), b"".join(tail)


def _pillow_png(mode, size, **save):
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, "PNG", **save)
    return buffer.getvalue()


# 3x3 greyscale, Adam7: the passes hold 1x1, 1x1, 2x1, 1x2 and 3x1 pixels, each row with its filter byte.
INTERLACED = (
    b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 3, 8, 0, 0, 0, 1)),
    b"\0" * 15,
    chunk(b"IEND", b""),
)


@pytest.mark.parametrize(
    "parts",
    [
        _idat(_pillow_png("1", (7, 3))),
        _idat(_pillow_png("L", (1, 1))),
        _idat(_pillow_png("P", (5, 5), bits=4)),
        _idat(_pillow_png("RGB", (9, 11))),
        _idat(_pillow_png("RGBA", (13, 9))),
        _idat(_pillow_png("I;16", (6, 2))),
        INTERLACED,
    ],
    ids=["1-bit", "grey", "4-bit palette", "RGB", "RGBA", "16-bit", "interlaced"],
)
def test_the_bound_is_exactly_the_rows_the_header_names(client, agent_headers, parts):
    """Exactly the bytes the rows need is stored; one byte more is refused."""
    head, pixels, tail = parts

    def send(data):
        return client.post(
            "/api/assets/upload",
            headers=agent_headers,
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(head + chunk(b"IDAT", zlib.compress(data)) + tail), "x.png")},
        )

    assert send(pixels).status_code == 201
    error = assert_error(send(pixels + b"\0"), 400, "validation_error")
    assert error["details"] == {"file": ["pixel data larger than its size"]}
