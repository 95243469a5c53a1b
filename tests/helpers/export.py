"""Helpers of the package and delete tests: real images, uploads, task rows, an image host."""

import io
import os
import zipfile
from pathlib import Path

from PIL import Image
from werkzeug.wrappers import Request, Response

from fakeplatform.threaded import Served
from models import Asset, ReviewTask, db
from rules.ids import new_id, now_iso
from services.assets import asset_view
from services.review.timeline import add_event


def image_bytes(fmt="PNG", size=(60, 40), color=(30, 120, 200)):
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt)
    return out.getvalue()


def noise_png(side=300):
    """A PNG of random pixels: it does not compress, so its size is about 3 * side * side bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(3 * side * side)).save(out, "PNG")
    return out.getvalue()


def upload(client, data, scope="review", name="image.png"):
    response = client.post(
        "/api/assets/upload",
        data={"file": (io.BytesIO(data), name), "scope": scope},
        content_type="multipart/form-data",
    )
    assert response.status_code in (200, 201), response.get_data(as_text=True)
    return response.get_json()


def remote_asset(url, content_type="image/png"):
    """A synced platform material: a library asset whose image lives at `url`."""
    with db.connection_context():
        asset = Asset.create(
            asset_id=new_id(),
            scope="library",
            url=url,
            stored_name=None,
            file_name="remote.png",
            content_type=content_type,
            platform_account="silicon-rise",
            platform_media_id=new_id(),
            created_at=now_iso(),
        )
        return asset_view(asset)


def make_task(
    content_type="article",
    status="pending_review",
    selections=None,
    body_draft=None,
    candidates=None,
    topic="Chips in the next decade",
    **columns,
):
    """A task row as the review workflow stores it (built directly, independent of its routes)."""
    now = now_iso()
    with db.connection_context():
        task = ReviewTask.create(
            task_id=new_id(),
            public_account="silicon-rise",
            content_type=content_type,
            topic=topic,
            status=status,
            candidates=candidates or {"titles": ["Unused candidate title"]},
            selections=selections,
            body_draft=body_draft,
            version=1,
            created_at=now,
            updated_at=now,
            **columns,
        )
        add_event(task, "task_created", "agent")
        return task.task_id


def stored_path(app, asset):
    return Path(app.config["REVIEW_UPLOADS_PATH"]) / asset["scope"] / asset["url"].rsplit("/", 1)[1]


def link_outside(app, asset, target):
    """Move the stored file of `asset` to `target` (outside the uploads) and leave a symlink in its place."""
    path = stored_path(app, asset)
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    return path


def temp_entries(app):
    folder = Path(app.config["REVIEW_INSTANCE_PATH"]) / "tmp"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def download(client, task_id):
    """The whole response; buffered: the test client then closes it as a server does after sending."""
    return client.get(f"/api/review/tasks/{task_id}/package", buffered=True)


def open_zip(response):
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return zipfile.ZipFile(io.BytesIO(response.get_data()))


class ImageServer:
    """A real HTTP image host on 127.0.0.1: /img/<name>, /status/<code>, /redirect?to=, /big."""

    def __init__(self):
        self.files, self.hits = {}, []
        self._served = Served(self._app)
        self.base = self._served.url

    def add(self, name, data):
        self.files[name] = data
        return f"{self.base}/img/{name}"

    @Request.application
    def _app(self, request):
        self.hits.append(request.full_path)
        parts = request.path.strip("/").split("/")
        if parts[0] == "img" and parts[-1] in self.files:
            return Response(self.files[parts[-1]], mimetype="image/png")
        if parts[0] == "status":
            return Response(b"nope", status=int(parts[1]))
        if parts[0] == "redirect":
            return Response(status=302, headers={"Location": request.args["to"]})
        if parts[0] == "big":  # 10 MiB + 1 byte, without Content-Length, so only counting stops it
            chunks = [b"\0" * (1024 * 1024)] * 10 + [b"\0"]
            return Response(iter(chunks), mimetype="image/png", direct_passthrough=True)
        return Response(status=404)

    def stop(self):
        self._served.stop()
