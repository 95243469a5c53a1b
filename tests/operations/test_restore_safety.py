"""Restore of a hostile or damaged archive (docs/api.md §16 "Restore", "Restore, continued"): refused
with a message saying what is wrong, before anything is written beyond the manifest's sizes, and
without creating anything; config.py only on request; a newer schema refused, at restore and at start."""

import gzip
import io
import os
import sqlite3
import stat
import tarfile
from contextlib import closing

import pytest

import app as app_module
from models import db
from models.schema import LATEST
from tests.helpers.restore import contents, folders, members, pack, populate, run_restore

BIG = 256 * 1024 * 1024  # what a bomb unpacks to
LIMIT = 16 * 1024 * 1024  # the largest file the restore process may write


@pytest.fixture
def source(make_app, tmp_path):
    """An archive of an instance with a task, a cover, a feedback record and its screenshot."""
    app = make_app(**folders(tmp_path / "source"))
    populate(app, "芯片的未来")
    archive = tmp_path / "backup.tar.gz"
    assert app.test_cli_runner().invoke(args=["backup", str(archive)]).exit_code == 0
    db.close()
    return archive


@pytest.fixture
def target(make_app, tmp_path):
    """An empty instance to restore into: (app, its root folder)."""
    app = make_app(**folders(tmp_path / "target"))
    db.close()
    return app, tmp_path / "target"


def _restore(target, archive, *options):
    app, root = target
    before = contents(root)
    result = app.test_cli_runner().invoke(args=["restore", str(archive), *options])
    return result, before


def _refused(target, archive, named):
    result, before = _restore(target, archive)
    assert result.exit_code == 2, result.output
    assert named in result.output, result.output
    assert "not a backup of this service" not in result.output
    assert contents(target[1]) == before


def _schema(data, version, tmp_path):
    path = tmp_path / "carrier.db"
    path.write_bytes(data)
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE schema_version SET version = ?", (version,))
    return path.read_bytes()


# Finding 5: an archive of a newer schema.
@pytest.mark.parametrize("manifest_says", [LATEST + 1, LATEST])
def test_an_archive_of_a_newer_schema_is_refused(source, target, tmp_path, manifest_says):
    contents = members(source)
    contents["instance/review.db"] = _schema(contents["instance/review.db"], LATEST + 1, tmp_path)
    pack(source, contents, lambda manifest: manifest.update(schemaVersion=manifest_says))
    _refused(target, source, f"schema version {LATEST + 1}")
    assert f"up to {LATEST}" in _restore(target, source)[0].output


def test_the_service_refuses_to_start_on_a_database_newer_than_it_knows(make_app, tmp_path, monkeypatch):
    make_app()
    db.close()
    with closing(sqlite3.connect(tmp_path / "instance" / "review.db")) as connection, connection:
        connection.execute("UPDATE schema_version SET version = ?", (LATEST + 3,))
    with pytest.raises(Exception, match=rf"schema version {LATEST + 3}.*\b{LATEST}\b"):
        make_app()
    monkeypatch.setenv("REVIEW_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setenv("REVIEW_UPLOADS_PATH", str(tmp_path / "uploads"))
    monkeypatch.setattr(app_module.serving, "serve", lambda *args: pytest.fail("it served"))
    with pytest.raises(SystemExit, match=rf"^error: .*schema version {LATEST + 3}"):
        app_module.main([])


# Finding 6: hostile archives.
def test_config_py_comes_back_only_with_the_config_flag(make_app, tmp_path, target):
    app = make_app(**folders(tmp_path / "source"))
    (tmp_path / "source" / "instance" / "config.py").write_text("# settings of the archived instance\n")
    archive = tmp_path / "with-config.tar.gz"
    assert app.test_cli_runner().invoke(args=["backup", str(archive)]).exit_code == 0
    db.close()
    restored, _before = _restore(target, archive)
    assert restored.exit_code == 0, restored.output
    assert "config.py" in restored.output and "--config" in restored.output
    config = target[1] / "instance" / "config.py"
    assert not config.exists()
    again, _before = _restore(target, archive, "--force", "--config")
    assert again.exit_code == 0, again.output
    assert config.read_text() == "# settings of the archived instance\n"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


class _Zeros(io.RawIOBase):
    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def _bomb(contents, name):
    """A member as large as BIG where the manifest lists `name`'s true (small) size and SHA-256."""
    info = tarfile.TarInfo(name)
    info.size = BIG
    return [(info, io.BufferedReader(_Zeros(BIG)))]


def _sparse(contents, name):
    """A sparse member: one byte stored, BIG bytes long once unpacked."""
    info = tarfile.TarInfo(name + ".sparse")
    info.size = 1
    info.pax_headers = {"GNU.sparse.map": "0,1", "GNU.sparse.size": str(BIG)}
    return [(info, io.BytesIO(b"x"))]


@pytest.mark.parametrize(("hostile", "named"), [(_bomb, "the manifest says"), (_sparse, "sparse")])
def test_an_archive_that_unpacks_to_more_than_its_manifest_says_stops_before_writing_it(
    source, tmp_path, hostile, named
):
    contents = members(source)
    cover = next(name for name in contents if name.startswith("uploads/review/"))
    listed = dict(contents)
    if hostile is _bomb:
        del contents[cover]  # the bomb takes the cover's place, the manifest keeps the cover's size
    pack(
        source,
        contents,
        lambda manifest: (
            manifest["files"].update({cover: {"sha256": "0" * 64, "size": len(listed[cover])}})
            if hostile is _bomb
            else None
        ),
        extra=hostile(contents, cover),
    )
    assert source.stat().st_size < 2 * 1024 * 1024
    result = run_restore(tmp_path / "target", source, limit=LIMIT)  # a file past LIMIT kills it
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert named in result.stderr
    assert not (tmp_path / "target").exists()


@pytest.mark.parametrize(
    ("kind", "named"),
    [
        (tarfile.SYMTYPE, "symbolic link"),
        (tarfile.LNKTYPE, "hard link"),
        (tarfile.CHRTYPE, "device"),
        (tarfile.FIFOTYPE, "FIFO"),
    ],
)
def test_link_and_device_entries_are_refused(source, target, kind, named):
    info = tarfile.TarInfo("uploads/review/entry")
    info.type, info.linkname = kind, "/etc/passwd"
    pack(source, members(source), extra=[(info, None)])
    _refused(target, source, named)


def test_a_plain_file_where_a_folder_of_uploads_belongs_is_refused(source, target):
    contents = {"uploads/library": b"not a folder", **members(source)}
    pack(source, contents, lambda manifest: manifest["counts"].update(files=manifest["counts"]["files"] + 1))
    _refused(target, source, "uploads/library")


def test_restored_folders_are_0700_and_files_0600_whatever_the_umask(source, target):
    previous = os.umask(0)
    try:
        result, _before = _restore(target, source)
        backup = target[0].test_cli_runner().invoke(args=["backup", str(target[1] / "again.tar.gz")])
    finally:
        os.umask(previous)
    assert result.exit_code == 0 and backup.exit_code == 0, result.output + backup.output
    root = target[1]
    loose = {
        str(path.relative_to(root)): oct(stat.S_IMODE(path.stat().st_mode))
        for folder in ("instance", "uploads")
        for path in (root / folder).rglob("*")
        if stat.S_IMODE(path.stat().st_mode) != (0o700 if path.is_dir() else 0o600)
    }
    assert loose == {}
    assert any((root / "uploads" / "feedback").rglob("*.png"))  # nested folders were restored


# Finding 12: refusals say what is wrong, and create nothing.
@pytest.mark.parametrize(("offset", "named"), [(-8, "CRC"), (-1, "length")])
def test_a_damaged_gzip_trailer_is_refused(source, target, offset, named):
    data = bytearray(source.read_bytes())
    data[offset] ^= 0x01
    source.write_bytes(bytes(data))
    _refused(target, source, "damaged")
    assert named in _restore(target, source)[0].output


def test_a_damaged_member_header_is_called_damaged(source, target):
    tar = bytearray(gzip.decompress(source.read_bytes()))
    first = tarfile.open(fileobj=io.BytesIO(bytes(tar))).next()
    second = first.offset_data + -(-first.size // 512) * 512  # the header after the first member's data
    tar[second + 148] ^= 0x07  # in its checksum field
    source.write_bytes(gzip.compress(bytes(tar)))
    _refused(target, source, "damaged")


def test_a_refused_restore_into_missing_folders_creates_nothing(source, tmp_path):
    data = bytearray(source.read_bytes())
    data[-8] ^= 0x01
    source.write_bytes(bytes(data))
    result = run_restore(tmp_path / "new" / "place", source)
    assert result.returncode == 2, result.stderr
    assert "damaged" in result.stderr
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda manifest: manifest.pop("counts"), "counts"),
        (lambda manifest: manifest["counts"].update(files="12"), "counts.files"),
        (lambda manifest: manifest["counts"]["rows"].update(review_task=None), "counts.rows"),
        (lambda manifest: manifest["files"]["instance/secret_key"].pop("sha256"), "instance/secret_key"),
        (lambda manifest: manifest.update(schemaVersion="ten"), "schemaVersion"),
    ],
)
def test_a_damaged_manifest_is_named_so(source, target, change, named):
    pack(source, members(source), change)
    _refused(target, source, named)
    output = _restore(target, source)[0].output
    assert "manifest.json is damaged" in output and "None" not in output


def test_a_manifest_that_is_not_json_is_called_damaged(source, target):
    contents = members(source)
    pack(source, contents)
    contents = members(source)
    contents["manifest.json"] = contents["manifest.json"][:-20]
    with tarfile.open(source, "w:gz") as out:
        for name, data in contents.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    _refused(target, source, "manifest.json is damaged")
