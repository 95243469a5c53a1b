"""Helpers shared by the feedback tests (no tests in this module): payloads, files, a live server."""

import io
import itertools
import threading
import zipfile

from PIL import Image
from PIL.PngImagePlugin import PngInfo

from fakeplatform.threaded import Served
from models import db
from models.feedback import Feedback

WEB = {"x-feedback-client-token": "client-web-token"}
MINI = {"x-feedback-client-token": "client-mini-token"}
UNLIMITED = {
    "FEEDBACK_RATE_LIMIT_PER_IP": "",
    "FEEDBACK_RATE_LIMIT_PER_DEVICE": "",
    "FEEDBACK_RATE_LIMIT_PER_VERSION": "",
    "FEEDBACK_RATE_LIMIT_PER_CHANNEL": "",
}
_serial = itertools.count(1)


def payload(**overrides):
    """A valid, distinct creation payload (its content differs each call, so no duplicate)."""
    body = {
        "type": "bug",
        "title": "应用闪退",
        "content": f"打开首页后应用闪退 #{next(_serial)}",
        "appName": "carbon-fitness",
        "appVersion": "2.3.0",
        "platform": "ios",
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


def submit(client, body=None, headers=WEB, ip="10.0.0.1", **kwargs):
    return client.post(
        "/api/feedbacks",
        json=payload() if body is None else body,
        headers=headers,
        environ_base={"REMOTE_ADDR": ip},
        **kwargs,
    )


def created(client, **overrides):
    response = submit(client, payload(**overrides))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def set_fields(feedback_id, **columns):
    """Change stored columns directly (e.g. move createdAt into the past)."""
    with db.connection_context():
        assert Feedback.update(**columns).where(Feedback.feedback_id == feedback_id).execute() == 1


def upload(client, feedback_id, data, file_name, kind, headers=WEB, **fields):
    form = {"file": (io.BytesIO(data), file_name), "kind": kind, **fields}
    return client.post(
        f"/api/feedbacks/{feedback_id}/attachments", data=form, headers=headers, content_type="multipart/form-data"
    )


def image_bytes(fmt="PNG", size=(40, 30), mode="RGB", **save):
    buffer = io.BytesIO()
    Image.new(mode, size, (200, 30, 30) if mode == "RGB" else 128).save(buffer, fmt, **save)
    return buffer.getvalue()


def png_with_text():
    info = PngInfo()
    info.add_text("Author", "secret-author-name")
    return image_bytes("PNG", pnginfo=info)


def exif_block():
    exif = Image.Exif()
    exif[0x010F] = "SecretCameraMaker"  # Make
    exif[0x0112] = 6  # Orientation: rotate 90° clockwise to display
    return exif.tobytes()


def zip_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.log", "line one\n")
    return buffer.getvalue()


class LiveServer:
    """The app on a real threaded HTTP server on 127.0.0.1 (the test client is not for concurrency)."""

    def __init__(self, app):
        self.app = app

    def __enter__(self):
        self._served = Served(self.app)
        self.url = self._served.url
        return self

    def __exit__(self, *_exc):
        self._served.stop()


def run_together(count, action):
    """Run action(i) in `count` threads released at the same moment; the results in order."""
    barrier = threading.Barrier(count)
    results = [None] * count

    def worker(index):
        barrier.wait()
        results[index] = action(index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results
