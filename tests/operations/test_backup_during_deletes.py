"""A backup taken while tasks are deleted (issue 29, docs/api.md §11): the archive holds every file its
database names. Before, a task deleted after the database was copied lost its files before they
were read, and the archive named them without holding them (5-7 per archive under load)."""

import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from contextlib import closing

import requests
from PIL import Image

from models import db
from services.operations.backup import create_backup
from services.task_delete import delete_task
from tests.helpers.review import article_payload, create_task, png_bytes
from tests.helpers.served import AGENT, ROOT, served_process

TASKS = 12
PASSWORD = "a long enough password"


def _tasks_with_their_own_images(client):
    ids = []
    for number in range(TASKS):
        upload = client.post(
            "/api/assets/upload",
            headers=AGENT,
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(png_bytes(300, 200 + number)), "c.png")},
        )
        assert upload.status_code == 201, upload.get_json()
        ids.append(create_task(client, AGENT, article_payload([upload.get_json()["url"]], topic=f"t{number}"))["id"])
    return ids


def _named_and_held(archive, tmp_path):
    """(files the archive's database names, files the archive holds, its manifest)."""
    with tarfile.open(archive) as packed:
        manifest = json.loads(packed.extractfile("manifest.json").read())
        held = {name.removeprefix("uploads/") for name in packed.getnames() if name.startswith("uploads/")}
        (tmp_path / "archived.db").write_bytes(packed.extractfile("instance/review.db").read())
    with closing(sqlite3.connect(tmp_path / "archived.db")) as copy:
        named = {f"{scope}/{name}" for scope, name in copy.execute("SELECT scope, stored_name FROM asset")}
    return named, held, manifest


def test_tasks_deleted_while_the_files_are_copied_leave_their_files_in_the_archive(app, tmp_path):
    ids = _tasks_with_their_own_images(app.test_client())
    settings = app.extensions["settings"]
    deletions = []

    def delete_half():
        with db.connection_context():
            deletions.extend(delete_task(task_id, settings)["deletedFileCount"] for task_id in ids[::2])

    def progress(done, _total):
        if done == 1:  # the database is copied, the first file read: the rest are deleted now
            deleter = threading.Thread(target=delete_half)
            deleter.start()
            deleter.join()

    archive = tmp_path / "backup.tar.gz"
    with app.app_context():
        manifest = create_backup(settings, str(archive), progress)
    assert deletions == [1] * (TASKS // 2)  # every deleted task's file is gone from uploads/
    named, held, archived = _named_and_held(archive, tmp_path)
    assert archived == manifest and manifest["missingFiles"] == []
    assert named == held and len(held) == TASKS  # the archive is the moment of its database copy
    assert manifest["counts"]["files"] == TASKS
    assert not [path for path in (tmp_path / "uploads").rglob("*") if path.name.startswith(".backup-")]


def _noise_png(side):
    """A PNG that does not compress: copying it into the archive takes a while."""
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(buffer, "PNG")
    return buffer.getvalue()


def test_flask_backup_beside_a_service_deleting_tasks(tmp_path):
    """Black-box: `flask --app app backup` while the served process deletes tasks the whole time."""
    with served_process(tmp_path, REVIEW_ADMIN_USERNAME="admin", REVIEW_ADMIN_PASSWORD=PASSWORD) as (base, _server):
        admin = requests.Session()
        signed = admin.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert signed.status_code == 303, signed.headers
        ids = []
        for number in range(60):
            image = requests.post(
                f"{base}/api/assets/upload",
                headers=AGENT,
                timeout=30,
                files={"file": (f"{number}.png", _noise_png(300), "image/png")},
            ).json()
            ids.append(
                requests.post(
                    f"{base}/api/review/agent/tasks",
                    headers=AGENT,
                    timeout=30,
                    json=article_payload([image["url"]], topic=f"t{number}"),
                ).json()["id"]
            )
        archive = tmp_path / "backup.tar.gz"
        env = {
            **os.environ,
            "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
            "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        }
        backup = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "backup", str(archive)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deleted = 0
        for task_id in reversed(ids):  # the archive's files are read in the order of their rows
            if backup.poll() is not None:
                break
            answer = admin.delete(f"{base}/api/review/tasks/{task_id}", headers={"Origin": base}, timeout=30)
            assert answer.status_code == 200, answer.text
            deleted += 1
            time.sleep(0.05)  # spread over the backup's run: its start, its database copy, its files
        out, err = backup.communicate(timeout=120)
        assert backup.returncode == 0, err
        assert deleted > 0
    named, held, manifest = _named_and_held(archive, tmp_path)
    assert manifest["missingFiles"] == [] and "were gone" not in err, manifest["missingFiles"]
    assert named == held and manifest["counts"]["files"] == len(held) > 0  # copied before the last deletion
