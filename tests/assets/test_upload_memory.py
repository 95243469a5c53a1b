"""Large legal images are checked without holding their whole frame (docs/api.md §6): 6000x6000 PNGs of
16-bit RGBA (~280 KB each, 144 MB decoded) and 6000x6000 JPEGs leave the served process's peak and
resident memory within a few tens of MiB of what it was (bench/bench_upload_memory.py measures it)."""

import io
import struct
import zlib

import pytest
import requests
from PIL import Image

from tests.helpers.app import assert_error
from tests.helpers.served import AGENT, served_process

SIZE = 6000
GROWTH_ALLOWED = 64 * 1024 * 1024  # measured: ~16 MiB; one whole frame is 108-144 MiB


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.fixture(scope="module")
def large_images():
    """Three distinct 6000x6000 16-bit RGBA PNGs and two distinct 6000x6000 JPEGs."""
    packer = zlib.compressobj(9)
    row = b"\0" * (1 + SIZE * 8)
    idat = _chunk(b"IDAT", b"".join(packer.compress(row) for _ in range(SIZE)) + packer.flush())
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 16, 6, 0, 0, 0))
    pngs = [
        b"\x89PNG\r\n\x1a\n" + header + _chunk(b"tEXt", b"Comment\0%d" % n) + idat + _chunk(b"IEND", b"")
        for n in range(3)
    ]
    picture = Image.linear_gradient("L").resize((SIZE, SIZE)).convert("RGB")
    jpegs = []
    for n in range(2):
        picture.paste((255, 255, 0), (n * 64, 0, n * 64 + 64, 64))
        buffer = io.BytesIO()
        picture.save(buffer, "JPEG", quality=80)
        jpegs.append(buffer.getvalue())
    return [("png", data) for data in pngs] + [("jpg", data) for data in jpegs]


def _memory(pid):
    """(VmRSS, VmHWM) in bytes."""
    found = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0]) * 1024
    return found["VmRSS"], found["VmHWM"]


def test_large_legal_uploads_leave_the_memory_as_it_was(tmp_path, large_images):
    with served_process(tmp_path) as (base, server):

        def upload(name, data):
            response = requests.post(
                f"{base}/api/assets/upload", headers=AGENT, timeout=120, files={"file": (name, data)}
            )
            assert response.status_code == 201, response.text[:300]
            return response.json()

        warm = io.BytesIO()
        Image.new("RGB", (64, 64), (10, 20, 30)).save(warm, "JPEG")
        upload("warm.jpg", warm.getvalue())  # Pillow, its JPEG decoder and the upload path loaded
        upload("warm.png", _small_png())
        resident, peak = _memory(server.pid)
        for number, (extension, data) in enumerate(large_images):
            asset = upload(f"large-{number}.{extension}", data)
            assert (asset["width"], asset["height"]) == (SIZE, SIZE)
        resident_after, peak_after = _memory(server.pid)
    assert peak_after - max(peak, resident) < GROWTH_ALLOWED, (
        f"peak memory grew by {(peak_after - max(peak, resident)) // (1024 * 1024)} MiB"
    )
    assert resident_after - resident < GROWTH_ALLOWED, (
        f"resident memory grew by {(resident_after - resident) // (1024 * 1024)} MiB"
    )


def _small_png():
    buffer = io.BytesIO()
    Image.new("RGBA", (64, 64), (1, 2, 3, 4)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("progressive", [False, True])
@pytest.mark.parametrize("damage", ["cut in half", "cut before the end marker", "scrambled"])
def test_a_jpeg_checked_at_an_eighth_of_its_size_still_shows_its_damage(client, agent_headers, progressive, damage):
    buffer = io.BytesIO()
    Image.linear_gradient("L").resize((2000, 1500)).convert("RGB").save(
        buffer, "JPEG", quality=90, progressive=progressive
    )
    data = bytearray(buffer.getvalue())
    if damage == "scrambled":
        data[len(data) // 3 : len(data) // 3 + 200] = bytes(0 if i % 7 == 0 else 0xFF for i in range(200))
    data = data[: len(data) // 2] if damage == "cut in half" else data[:-2] if damage.startswith("cut") else data
    response = client.post(
        "/api/assets/upload",
        headers=agent_headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(bytes(data)), "x.jpg")},
    )
    assert assert_error(response, 400, "validation_error")["details"] == {"file": ["truncated or damaged image"]}
