"""The file journal: files placed for records that never came are swept at start, others are kept."""

import subprocess
import sys

from models import db
from models.files import PendingFile
from rules.ids import now_iso
from services import files


def _dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_sweep_removes_files_of_dead_processes_only(app, tmp_path):
    uploads = tmp_path / "uploads"
    (uploads / "review" / "orphan.png").write_bytes(b"x")
    (uploads / "review" / ".upload-orphan.png.abc123").write_bytes(b"half")
    (uploads / "review" / "in-flight.png").write_bytes(b"y")
    (uploads / "review" / "kept.png").write_bytes(b"z")
    with db.connection_context():
        PendingFile.create(path="review/orphan.png", pid=_dead_pid(), created_at=now_iso())
        PendingFile.create(path="review/in-flight.png", pid=1, created_at=now_iso())  # pid 1 is alive
        PendingFile.create(path="../outside.png", pid=_dead_pid(), created_at=now_iso())
        (tmp_path / "outside.png").write_bytes(b"never touched")
        assert files.sweep_pending(uploads) == 1
        assert [p.path for p in PendingFile.select()] == ["review/in-flight.png"]
    assert sorted(p.name for p in (uploads / "review").iterdir()) == ["in-flight.png", "kept.png"]
    assert (tmp_path / "outside.png").exists()


def test_sweep_removes_the_record_folder_it_empties(app, tmp_path):
    """A feedback's first attachment that never got its record left an empty uploads/feedback/<id>/."""
    uploads = tmp_path / "uploads"
    for name in ("fb-1", "fb-2"):
        (uploads / "feedback" / name).mkdir(parents=True)
        (uploads / "feedback" / name / "a.png").write_bytes(b"x")
    (uploads / "feedback" / "fb-2" / "b.png").write_bytes(b"kept, with its record")
    with db.connection_context():
        for name in ("fb-1", "fb-2"):
            PendingFile.create(path=f"feedback/{name}/a.png", pid=_dead_pid(), created_at=now_iso())
        assert files.sweep_pending(uploads) == 2
    assert sorted(p.name for p in (uploads / "feedback").iterdir()) == ["fb-2"]
    assert [p.name for p in (uploads / "feedback" / "fb-2").iterdir()] == ["b.png"]


def test_placed_file_settles_with_its_record_or_is_removed(app, tmp_path):
    uploads = tmp_path / "uploads"
    with db.connection_context():
        with files.placed_file(uploads, uploads / "review", "a.png", b"data") as placement:
            assert PendingFile.select().count() == 1
            with db.atomic():
                placement.settle()
        assert PendingFile.select().count() == 0
        assert (uploads / "review" / "a.png").read_bytes() == b"data"
        try:
            with files.placed_file(uploads, uploads / "review", "b.png", b"data"):
                raise RuntimeError("the record insert failed")
        except RuntimeError:
            pass
        assert not (uploads / "review" / "b.png").exists()
        assert PendingFile.select().count() == 0


def _owner(host, pid):
    import json

    from services import owners

    return json.dumps({"host": host, "pidns": owners._pid_namespace(), "pid": pid})


def test_a_file_another_host_is_placing_is_its_own_until_it_is_hours_old(app, tmp_path):
    """The instance and uploads folders may be shared by several machines: a start on one took another's
    placement for a stopped process's (its pid runs nowhere here) and removed the file before its row came."""
    import socket
    from datetime import timedelta

    from rules.ids import iso, utcnow

    uploads = tmp_path / "uploads"
    for name in ("placing.png", "left.png", "dead-here.png"):
        (uploads / "review" / name).write_bytes(b"x")
    hours_ago = iso(utcnow() - timedelta(hours=7))
    dead = _dead_pid()
    with db.connection_context():
        PendingFile.create(path="review/placing.png", pid=dead, owner=_owner("web-2", dead), created_at=now_iso())
        PendingFile.create(path="review/left.png", pid=dead, owner=_owner("web-2", dead), created_at=hours_ago)
        here = _owner(socket.gethostname(), dead)
        PendingFile.create(path="review/dead-here.png", pid=dead, owner=here, created_at=now_iso())
        assert files.sweep_pending(uploads) == 2
        assert [p.path for p in PendingFile.select()] == ["review/placing.png"]
    assert [p.name for p in (uploads / "review").iterdir()] == ["placing.png"]


def test_an_upload_whose_placement_was_swept_meanwhile_writes_no_row(app, admin_client, monkeypatch):
    """A sweep took the placement's entry and file before the row was inserted: the row was written all the
    same (201), naming a file that was gone."""
    import io

    from models import Asset
    from tests.helpers.export import image_bytes

    real = files.write_atomically

    def written_then_swept(folder, name, data):
        path = real(folder, name, data)
        with db.connection_context():
            PendingFile.delete().execute()  # as another start's sweep would, with the file
        path.unlink()
        return path

    monkeypatch.setattr(files, "write_atomically", written_then_swept)
    answer = admin_client.post(
        "/api/assets/upload",
        data={"file": (io.BytesIO(image_bytes(color=(5, 6, 7))), "a.png"), "scope": "review"},
        content_type="multipart/form-data",
    )
    assert (answer.status_code, answer.get_json()["error"]["code"]) == (500, "storage_unavailable")
    with db.connection_context():
        assert Asset.select().count() == 0
