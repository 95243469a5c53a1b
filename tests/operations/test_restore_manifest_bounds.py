"""A crafted manifest.json (docs/api.md §16): nesting deeper than a backup's manifest has, or more bytes than
a backup of the archive's members can have, is refused before it is parsed: exit 2 naming manifest.json, no
traceback, nothing created, and the restore process stays small."""

import io
import json
import os
import subprocess
import sys
import tarfile

import pytest

from models import db
from tests.helpers.restore import ROOT, folders, members, pack, populate, run_restore

SMALL_PROCESS = 200 * 1024 * 1024  # a restore process peaks near 60 MiB; the old one parsed 24 MB into ~1.2 GB


@pytest.fixture
def source(make_app, tmp_path):
    """The members ({name: data}) of an archive of an instance with a task, a cover, a feedback record and
    its screenshot."""
    app = make_app(**folders(tmp_path / "source"))
    populate(app, "芯片的未来")
    archive = tmp_path / "backup.tar.gz"
    assert app.test_cli_runner().invoke(args=["backup", str(archive)]).exit_code == 0
    db.close()
    return members(archive)


def _with_manifest(archive, contents, manifest):
    """An archive of `contents` with `manifest` (bytes) as its manifest.json, the last member."""
    with tarfile.open(archive, "w:gz") as out:
        for name, data in [*((n, d) for n, d in contents.items() if n != "manifest.json"), ("manifest.json", manifest)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            out.addfile(info, io.BytesIO(data))
    return archive


# `flask --app app restore ARCHIVE`, writing the process's own peak (VmHWM: of this program's memory since
# exec, unlike ru_maxrss, which counts the test process it was forked from) to a file as it exits.
MEASURED = """import atexit, runpy, sys
report, archive = sys.argv[1:]
def peak():
    with open(report, "w") as out:
        out.write(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")))
atexit.register(peak)
sys.argv = ["flask", "--app", "app", "restore", archive]
runpy.run_module("flask", run_name="__main__")
"""


def _restore_measured(root, archive):
    """run_restore's command, with the peak resident memory of that process in bytes."""
    env = {**os.environ, **folders(root), "DATABASE_URL": ""}
    env.pop("REVIEW_RESTORE_FAULT", None)
    report = archive.with_suffix(".peak")
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(report), str(archive)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, done.stderr, int(report.read_text().split()[1]) * 1024


def _assert_refused(result, root, named):
    assert result.returncode == 2, result.stderr[-3000:]
    assert named in result.stderr and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert not root.exists()  # no instance, uploads folder or secret_key made


@pytest.mark.parametrize(
    "manifest",
    [b"[" * 200_000, b'{"files": ' * 5000 + b"{}" + b"}" * 5000, b'{"format": 1, "files": {"a": {"b": {}}}}'],
    ids=["200,000 [", "5,000 objects", "one level too deep"],
)
def test_a_manifest_nested_deeper_than_a_backups_is_refused(source, tmp_path, manifest):
    archive = _with_manifest(tmp_path / "nested.tar.gz", source, manifest)
    place = tmp_path / "new" / "place"
    _assert_refused(run_restore(place, archive), tmp_path / "new", "manifest.json is damaged: it is nested")


def test_a_manifest_larger_than_its_archive_can_need_is_refused_before_reading_it(source, tmp_path):
    """24 MB of `{},` in an archive of a few members: refused from its header, not parsed into a gigabyte."""
    manifest = b"[" + b"{}," * 8_000_000 + b"{}]"
    archive = _with_manifest(tmp_path / "large.tar.gz", source, manifest)
    assert archive.stat().st_size < 1_000_000
    code, stderr, peak = _restore_measured(tmp_path / "new" / "place", archive)
    assert code == 2 and "manifest.json is damaged" in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert not (tmp_path / "new").exists()
    assert peak < SMALL_PROCESS, f"the restore process peaked at {peak // (1024 * 1024)} MiB"
    assert "more than a backup of" in stderr, stderr[-3000:]


def test_a_manifest_with_more_containers_than_its_members_is_refused(source, tmp_path):
    """Within the size a few members allow, but an object per byte or two: not a manifest's shape."""
    manifest = json.loads(source["manifest.json"])
    manifest["missingFiles"] = [{}] * 200_000
    archive = _with_manifest(tmp_path / "shape.tar.gz", source, json.dumps(manifest).encode())
    _assert_refused(
        run_restore(tmp_path / "new" / "place", archive),
        tmp_path / "new",
        "manifest.json is damaged: it holds more objects",
    )


def test_a_backup_with_many_files_and_missing_files_still_restores(source, tmp_path):
    """The bounds follow the archive: 3,000 uploaded files and 20,000 missing ones are well inside them."""
    contents = dict(source)
    for number in range(3000):
        contents[f"uploads/library/extra-{number:05d}-{'x' * 40}.png"] = b"%d" % number

    def many_missing(manifest):
        manifest["missingFiles"] = [f"review/gone-{number:06d}-{'y' * 40}.png" for number in range(20_000)]
        manifest["counts"]["files"] += 3000

    archive = tmp_path / "many.tar.gz"
    pack(archive, contents, many_missing)
    result = run_restore(tmp_path / "new" / "place", archive)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(list((tmp_path / "new" / "place" / "uploads" / "library").iterdir())) >= 3000


def test_a_manifest_of_unterminated_escapes_is_refused_as_fast_as_any_other(source, tmp_path):
    """`{` and 150,000 `\\"`: the old string pattern searched from every quote (quadratic: about a minute
    here, hours at the size bound); now each string is scanned once. Timed against a refusal of the same
    size that never looked at strings, with a wide margin."""
    import time

    def refusal(name, manifest):
        archive = _with_manifest(tmp_path / f"{name}.tar.gz", source, manifest)
        started = time.monotonic()
        result = run_restore(tmp_path / name / "place", archive)
        return result, time.monotonic() - started

    plain, plain_seconds = refusal("plain", b"[" * 300_000)
    _assert_refused(plain, tmp_path / "plain", "manifest.json is damaged")
    crafted, crafted_seconds = refusal("crafted", b"{" + b'\\"' * 150_000)
    _assert_refused(crafted, tmp_path / "crafted", "manifest.json is damaged: a string in it never ends")
    assert crafted_seconds < 3 * plain_seconds + 2, (crafted_seconds, plain_seconds)
