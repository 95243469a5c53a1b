"""Backup and restore (docs/api.md §11): consistent under writes, checked before anything changes."""

import io
import json
import os
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from models import db
from tests.helpers.app import AGENT_TOKEN, create_admin, login
from tests.helpers.feedback import image_bytes, payload, upload
from tests.helpers.restore import contents
from tests.helpers.review import article_payload, create_task, png_bytes

AGENT = {"x-review-agent-token": AGENT_TOKEN}
WEB = {"x-feedback-client-token": "client-web-token"}


def _folders(root):
    return {"REVIEW_INSTANCE_PATH": str(root / "instance"), "REVIEW_UPLOADS_PATH": str(root / "uploads")}


def _writer(app, number, stop, made):
    """Creates a task with an uploaded cover, a feedback record and its screenshot, again and again."""
    client = app.test_client()
    serial = 0
    while not stop.is_set():
        serial += 1
        asset = client.post(
            "/api/assets/upload",
            headers=AGENT,
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(png_bytes(900 + number, 500 + serial)), "c.png"), "scope": "review"},
        ).get_json()
        create_task(client, AGENT, article_payload([asset["url"]], topic=f"writer {number} #{serial}"))
        record = client.post(
            "/api/feedbacks",
            json=payload(),
            headers=WEB,
            environ_base={"REMOTE_ADDR": f"10.{number}.{serial // 250}.{serial % 250}"},
        )
        assert record.status_code == 201, record.get_json()
        added = upload(client, record.get_json()["id"], image_bytes(size=(30 + serial, 20)), "s.png", "screenshot")
        assert added.status_code == 201, added.get_json()
        made.append(serial)


def test_a_backup_under_write_load_restores_every_record_file_and_session(make_app, tmp_path):
    app = make_app(FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_CHANNEL="")
    create_admin()
    admin = app.test_client()
    login(admin)
    stop, made = threading.Event(), []
    writers = [threading.Thread(target=_writer, args=(app, number, stop, made)) for number in range(4)]
    for writer in writers:
        writer.start()
    while len(made) < 8:  # every writer is under way
        threading.Event().wait(0.05)
    archive = tmp_path / "backup.tar.gz"
    result = app.test_cli_runner().invoke(args=["backup", str(archive)])
    stop.set()
    for writer in writers:
        writer.join()
    assert result.exit_code == 0, result.output
    with tarfile.open(archive) as packed:
        manifest = json.loads(packed.extractfile("manifest.json").read())
    rows, files = manifest["counts"]["rows"], manifest["counts"]["files"]
    assert result.output.startswith(f"backup written to {archive}: {rows['review_task']} tasks")
    assert rows["review_task"] >= 8 and rows["feedback"] >= 8 and files == len(manifest["files"]) - 2
    assert manifest["missingFiles"] == []

    target = tmp_path / "restored"
    restored_app = make_app(**_folders(target))
    restored = restored_app.test_cli_runner().invoke(args=["restore", str(archive)])
    assert restored.exit_code == 0, restored.output
    db.close()
    restored_app = make_app(**_folders(target))
    client = restored_app.test_client()
    client.set_cookie("review_admin_session", admin.get_cookie("review_admin_session").value)  # signed before
    tasks = client.get("/api/review/tasks?status=all&limit=1000")
    assert tasks.status_code == 200 and len(tasks.get_json()) == rows["review_task"]
    for task in tasks.get_json():
        cover = task["candidates"]["coverImages"][0]
        assert client.get(cover).status_code == 200
    feedback = client.get("/api/feedbacks?pageSize=100").get_json()
    assert feedback["pagination"]["total"] == rows["feedback"]
    served = 0
    for item in feedback["items"]:
        for attachment in client.get(f"/api/feedbacks/{item['id']}").get_json()["attachments"]:
            assert client.get(f"/api/feedbacks/{item['id']}/attachments/{attachment['id']}").status_code == 200
            served += 1
    assert served == rows["feedback_attachment"]
    assert rows["asset"] + served == files  # every upload and screenshot a row of the backup names


@pytest.fixture
def backed_up(make_app, tmp_path, agent_headers):
    """An archive of an instance with one task and its cover, and an empty target instance."""
    app = make_app()
    client = app.test_client()
    asset = client.post(
        "/api/assets/upload",
        headers=agent_headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(png_bytes(900, 500)), "c.png"), "scope": "review"},
    ).get_json()
    create_task(client, agent_headers, article_payload([asset["url"]]))
    archive = tmp_path / "backup.tar.gz"
    assert app.test_cli_runner().invoke(args=["backup", str(archive)]).exit_code == 0
    target = make_app(**_folders(tmp_path / "target"))
    return archive, target, tmp_path / "target"


def _rewrite(archive, change):
    """The archive with its members passed through change(name, data) -> data or None (left out)."""
    out = io.BytesIO()
    with tarfile.open(archive) as source, tarfile.open(fileobj=out, mode="w:gz") as packed:
        for member in source:
            data = change(member.name, source.extractfile(member).read())
            if data is not None:
                member.size = len(data)
                packed.addfile(member, io.BytesIO(data))
    Path(archive).write_bytes(out.getvalue())


def _flip(name_start):
    def change(name, data):
        if name.startswith(name_start):
            return data[:40] + bytes([data[40] ^ 1]) + data[41:]
        return data

    return change


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda path: _rewrite(path, _flip("uploads/review/")), "does not match its SHA-256"),
        (lambda path: _rewrite(path, _flip("instance/review.db")), "instance/review.db does not match its SHA-256"),
        (lambda path: _rewrite(path, lambda name, data: None if name == "manifest.json" else data), "no manifest.json"),
        (lambda path: path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2]), "truncated or damaged"),
        (
            lambda path: _rewrite(path, lambda name, data: None if name.startswith("uploads/") else data),
            "missing from the archive",
        ),
    ],
)
def test_a_damaged_archive_is_refused_and_changes_nothing(backed_up, damage, named):
    archive, target, folder = backed_up
    damage(archive)
    before = contents(folder)
    result = target.test_cli_runner().invoke(args=["restore", str(archive)])
    assert result.exit_code == 2
    assert named in result.output
    assert contents(folder) == before


def test_a_target_in_use_needs_force(backed_up, agent_headers):
    archive, target, folder = backed_up
    create_task(target.test_client(), agent_headers, article_payload(topic="already here"))
    db.close()
    before = contents(folder)
    refused = target.test_cli_runner().invoke(args=["restore", str(archive)])
    assert refused.exit_code == 2 and "already holds 1 tasks" in refused.output
    assert contents(folder) == before
    forced = target.test_cli_runner().invoke(args=["restore", str(archive), "--force"])
    assert forced.exit_code == 0, forced.output
    with db.connection_context():
        from models import ReviewTask

        assert [task.topic for task in ReviewTask.select()] == ["芯片的未来"]


def test_a_swap_that_fails_midway_puts_everything_back(backed_up, agent_headers, monkeypatch):
    """The disk refuses a rename halfway through the swap: the target is as it was, not half restored."""
    archive, target, folder = backed_up
    create_task(target.test_client(), agent_headers, article_payload(topic="already here"))
    db.close()
    before = contents(folder)
    real_replace, calls = os.replace, []

    def failing(source, destination):
        calls.append(destination)
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        return real_replace(source, destination)

    monkeypatch.setattr(os, "replace", failing)
    result = target.test_cli_runner().invoke(args=["restore", str(archive), "--force"])
    assert result.exit_code == 2 and len(calls) > 5  # failed in the swap, then moved back
    assert "No space left on device" in result.output and "put back" in result.output
    monkeypatch.undo()
    assert contents(folder) == before


def test_a_progress_line_only_on_a_terminal(monkeypatch):
    """Long runs show `backup: k/n files` on a terminal; a pipe or a cron mail gets none."""
    from cli import backup as backup_cli

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert backup_cli._progress("backup") is None  # pytest captures stderr: not a terminal
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    show = backup_cli._progress("backup")
    show(3, 40)
    show(40, 40)
    assert terminal.getvalue() == "\rbackup: 3/40 files\rbackup: 40/40 files"


_KILLED_MIDWAY = """
import os, sys
sys.path.insert(0, {root!r})
from app import create_app
from services.operations import backup
app = create_app({config!r}, serve=False)
real = backup._add
def add(archive, name, path, manifest):
    real(archive, name, path, manifest)
    if name.startswith("uploads/"):
        os._exit(9)  # killed while the archive is written (kill -9, the OOM killer)
backup._add = add
with app.app_context():
    backup.create_backup(app.extensions["settings"], {target!r})
"""


def test_a_backup_killed_midway_leaves_no_database_copy_and_no_readable_archive(make_app, tmp_path, agent_headers):
    """Killed mid-archive, the old backup left a whole copy of the database (password hashes, tokens) in
    instance/tmp/backup-*, its pins in uploads/, and a partial archive any user could read (0644), for good."""
    import stat
    import subprocess

    from tests.helpers.served import ROOT

    app = make_app()
    client = app.test_client()
    client.post(
        "/api/assets/upload",
        headers=agent_headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(png_bytes(900, 500)), "c.png"), "scope": "review"},
    )
    config = {key: app.config[key] for key in ("REVIEW_INSTANCE_PATH", "REVIEW_UPLOADS_PATH", "DATABASE_URL")}
    target = tmp_path / "out" / "b.tar.gz"
    target.parent.mkdir()
    umask = os.umask(0o022)
    try:
        script = _KILLED_MIDWAY.format(root=str(ROOT), config={**config, "TESTING": True}, target=str(target))
        killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    finally:
        os.umask(umask)
    assert killed.returncode == 9, killed.stderr[-2000:]
    temp, uploads = Path(config["REVIEW_INSTANCE_PATH"]) / "tmp", Path(config["REVIEW_UPLOADS_PATH"])
    assert list(temp.glob("backup-*")) and list(uploads.glob(".backup-*"))  # what the kill left
    partial = target.with_name(target.name + ".partial")
    assert stat.S_IMODE(partial.stat().st_mode) == 0o600
    make_app()  # the next serving start
    assert list(temp.glob("backup-*")) == [] and list(uploads.glob(".backup-*")) == []


def test_the_next_backup_removes_what_a_killed_one_left_beside_a_running_service(make_app, tmp_path, agent_headers):
    """A backup command killed beside the service: its leftovers waited for the service's next start."""
    import subprocess

    from services.operations.backup import create_backup
    from tests.helpers.served import ROOT

    app = make_app()
    app.test_client().post(
        "/api/assets/upload",
        headers=agent_headers,
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(png_bytes(901, 500)), "c.png"), "scope": "review"},
    )
    config = {key: app.config[key] for key in ("REVIEW_INSTANCE_PATH", "REVIEW_UPLOADS_PATH", "DATABASE_URL")}
    target = tmp_path / "b.tar.gz"
    script = _KILLED_MIDWAY.format(root=str(ROOT), config={**config, "TESTING": True}, target=str(target))
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120).returncode == 9
    temp, uploads = Path(config["REVIEW_INSTANCE_PATH"]) / "tmp", Path(config["REVIEW_UPLOADS_PATH"])
    left = {*temp.glob("backup-*"), *uploads.glob(".backup-*")}
    assert len(left) == 2
    with app.app_context():
        create_backup(app.extensions["settings"], str(target))
    assert not any(path.exists() for path in left)


def test_a_backups_archive_is_0600_even_over_a_partial_one_an_earlier_run_left(app, tmp_path, monkeypatch):
    """O_CREAT keeps the mode of a file that exists: a `.partial` left 0644 was filled with the database at 0644."""
    import stat

    from services.operations.backup import create_backup

    target = tmp_path / "b.tar.gz"
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(b"an earlier run's")
    partial.chmod(0o644)
    modes = []
    real = tarfile.TarFile.addfile

    def noting(archive, info, fileobj=None):
        modes.append(stat.S_IMODE(partial.stat().st_mode))
        return real(archive, info, fileobj)

    monkeypatch.setattr(tarfile.TarFile, "addfile", noting)
    with app.app_context():
        create_backup(app.extensions["settings"], str(target))
    assert modes and set(modes) == {0o600}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
