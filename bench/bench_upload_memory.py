"""Memory of the served process while it checks large legal images (docs/api.md §6, docs/performance.md).

    python bench/bench_upload_memory.py [--count 10] [--kinds png,jpeg,webp]

Starts `python app.py` in its own process, uploads one small image (so Pillow and the upload path are
loaded), reads its resident memory (VmRSS, the baseline), then uploads `--count` distinct 6000x6000
images of each kind through POST /api/assets/upload and reads the peak (VmHWM) and the resident memory
after them. png: 16-bit RGBA, ~280 KB each (what a phone screenshot tool or an agent may send; decoded
whole it is 144 MB of 8-bit RGBA in Pillow); jpeg: RGB at quality 85; webp: lossless (stored as PNG, so
decoded whole by design).
"""

import argparse
import io
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import requests
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import free_port  # noqa: E402

TOKEN = "bench-agent-token-0123456789"
SIZE = 6000


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def rgba16_pngs(count, size=SIZE):
    """`count` distinct 16-bit RGBA PNGs of size x size: the same pixels, each with its own tEXt chunk."""
    row = b"\0" + b"\0" * (size * 8)
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(size)) + packer.flush()
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 16, 6, 0, 0, 0))
    return [
        b"\x89PNG\r\n\x1a\n"
        + header
        + _chunk(b"tEXt", b"Comment\0%d" % number)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
        for number in range(count)
    ]


def _encoded(fmt, count, size=SIZE, **save):
    image = Image.linear_gradient("L").resize((size, size)).convert("RGB")
    out = []
    for number in range(count):
        image.paste((255, 255, 0), (number * 32, 0, number * 32 + 32, 32))  # distinct files: each a new asset
        buffer = io.BytesIO()
        image.save(buffer, fmt, **save)
        out.append(buffer.getvalue())
    return out


MAKERS = {
    "png": rgba16_pngs,
    "jpeg": lambda count: _encoded("JPEG", count, quality=85),
    "webp": lambda count: _encoded("WEBP", count, lossless=True, quality=0),
}


def memory(pid):
    """(VmRSS, VmHWM) of the process, in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def serve(work):
    port = free_port()
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(work / "instance"),
        "REVIEW_UPLOADS_PATH": str(work / "uploads"),
        "PORT": str(port),
        "REVIEW_AGENT_TOKEN": TOKEN,
        "WEBHOOK_SENDER_ENABLED": "false",
        "TEAM_MESSAGES_ENABLED": "false",
        "CHAT_CARDS_ENABLED": "false",
    }
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                return server, base
        except requests.RequestException:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the service did not start")
        time.sleep(0.1)


def upload(base, data, name):
    response = requests.post(
        f"{base}/api/assets/upload",
        headers={"x-review-agent-token": TOKEN},
        timeout=120,
        files={"file": (name, data)},
        data={"scope": "review"},
    )
    if response.status_code != 201:
        raise SystemExit(f"{name}: HTTP {response.status_code} {response.text[:300]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--kinds", default="png,jpeg,webp")
    args = parser.parse_args()
    print(f"{'kind':6} {'file KB':>8} {'baseline MiB':>13} {'peak MiB':>9} {'after MiB':>10} {'s/upload':>9}")
    for kind in args.kinds.split(","):
        images = MAKERS[kind](args.count)
        with tempfile.TemporaryDirectory(prefix="bench-upload-memory-") as folder:
            server, base = serve(Path(folder))
            try:
                upload(base, _encoded("PNG", 1, size=64)[0], "warm.png")
                baseline, _ = memory(server.pid)
                started = time.monotonic()
                for number, data in enumerate(images):
                    upload(base, data, f"{kind}-{number}.{kind}")
                spent = (time.monotonic() - started) / len(images)
                after, peak = memory(server.pid)
            finally:
                server.terminate()
                server.wait(timeout=30)
        print(f"{kind:6} {len(images[0]) // 1024:8d} {baseline:13.0f} {peak:9.0f} {after:10.0f} {spent:9.2f}")


if __name__ == "__main__":
    main()
