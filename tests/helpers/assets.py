"""Images for the upload tests: small valid ones, decompression bombs, truncated data."""

import io
import re
import struct
import zlib

from PIL import Image

ID_NAME = re.compile(r"^[A-Za-z0-9_-]{16,64}\.(png|jpg|gif)$")


def image_bytes(fmt="PNG", size=(40, 30), color=(200, 30, 30), mode="RGB"):
    out = io.BytesIO()
    Image.new(mode, size, color).save(out, fmt)
    return out.getvalue()


def bomb_png(width, height):
    """A valid 1-bit PNG whose header promises width x height pixels; a few kB on disk."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    packer = zlib.compressobj(9)
    row = b"\0" * (1 + (width + 7) // 8)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def rows_cut_short(data):
    """The PNG with its image data cut to half its rows, recompressed, CRCs right and IEND present."""
    import struct
    import zlib

    parts, pos = [], 8
    while pos < len(data):
        length = struct.unpack(">I", data[pos : pos + 4])[0]
        parts.append((data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]))
        pos += 12 + length
    raw = zlib.decompress(b"".join(body for kind, body in parts if kind == b"IDAT"))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    head = b"".join(chunk(kind, body) for kind, body in parts if kind not in (b"IDAT", b"IEND"))
    return data[:8] + head + chunk(b"IDAT", zlib.compress(raw[: len(raw) // 2])) + chunk(b"IEND", b"")
