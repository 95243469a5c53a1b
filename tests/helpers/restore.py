"""Helpers of the restore tests: instances with content, archives taken apart and packed again, and
`flask --app app restore` run as a separate process (as an operator runs it, and so it can be killed)."""

import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
from contextlib import closing
from pathlib import Path

from tests.helpers.app import AGENT_TOKEN
from tests.helpers.feedback import image_bytes, payload, upload
from tests.helpers.review import article_payload, create_task, png_bytes

ROOT = Path(__file__).resolve().parents[2]
AGENT = {"x-review-agent-token": AGENT_TOKEN}
WEB = {"x-feedback-client-token": "client-web-token"}


def folders(root):
    return {"REVIEW_INSTANCE_PATH": str(root / "instance"), "REVIEW_UPLOADS_PATH": str(root / "uploads")}


def populate(app, topic, width=900):
    """A task with an uploaded cover, and a feedback record with a screenshot (a folder of its own)."""
    client = app.test_client()
    asset = client.post(
        "/api/assets/upload",
        headers=AGENT,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(png_bytes(width, 500)), "c.png"), "scope": "review"},
    ).get_json()
    create_task(client, AGENT, article_payload([asset["url"]], topic=topic))
    record = client.post("/api/feedbacks", json=payload(title=topic), headers=WEB)
    assert record.status_code == 201, record.get_json()
    added = upload(client, record.get_json()["id"], image_bytes(size=(width // 10, 20)), "s.png", "screenshot")
    assert added.status_code == 201, added.get_json()


def topics(instance):
    """The tasks' topics in the SQLite database of `instance` (read without the service)."""
    with closing(sqlite3.connect(f"file:{instance / 'review.db'}?mode=ro", uri=True)) as connection:
        return sorted(row[0] for row in connection.execute("SELECT topic FROM review_task"))


def uploaded(root):
    """{path under uploads/: SHA-256} of every uploaded file (the three scopes' folders)."""
    base = root / "uploads"
    return {
        str(path.relative_to(base)): hashlib.sha256(path.read_bytes()).hexdigest()
        for scope in ("review", "library", "feedback")
        for path in sorted((base / scope).rglob("*"))
        if path.is_file()
    }


def members(archive):
    """{name: data} of every member, in the archive's order."""
    with tarfile.open(archive) as packed:
        return {member.name: packed.extractfile(member).read() for member in packed}


def pack(archive, contents, change_manifest=None, extra=()):
    """Write `contents` ({name: data}) as an archive whose manifest lists each member's true SHA-256
    and size (then passed through change_manifest), after the raw (TarInfo, file) pairs of `extra`."""
    manifest = json.loads(contents["manifest.json"])
    manifest["files"] = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in contents.items()
        if name != "manifest.json"
    }
    if change_manifest:
        change_manifest(manifest)
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as out:
        for name, data in contents.items():
            if name != "manifest.json":
                add(out, name, data)
        for info, handle in extra:
            out.addfile(info, handle)
        add(out, "manifest.json", json.dumps(manifest).encode())


def add(out, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o600
    out.addfile(info, io.BytesIO(data))


def run_restore(root, archive, *options, fault=None, database_url="", limit=None):
    """`flask --app app restore ARCHIVE [options]` in a process of its own, on root's folders."""
    env = {**os.environ, **folders(root), "DATABASE_URL": database_url}
    env.pop("REVIEW_RESTORE_FAULT", None)
    if fault:
        env["REVIEW_RESTORE_FAULT"] = fault

    def limited():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "restore", str(archive), *options],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=limited if limit else None,
    )


def contents(root):
    """Every file under `root`, the database by its rows (closing connections checkpoints its WAL)."""
    out = {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.name.startswith("review.db")
    }
    with closing(sqlite3.connect(root / "instance" / "review.db")) as connection:
        out["rows"] = list(connection.iterdump())
    return out
