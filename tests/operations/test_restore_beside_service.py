"""A restore never races a running service (docs/api.md §11): `flask --app app restore` (with or without
`--force`) beside a live `python app.py` on the same instance refuses, exit 2, naming the process and
saying to stop it; nothing changes and the service keeps working. Once the service is stopped, the same
restore goes through. `copy-to` refuses the same way. On SQLite and on PostgreSQL."""

import os
import socket
import subprocess
import sys

import pytest
import requests

from models import db
from tests.helpers.restore import ROOT, folders, populate, run_restore
from tests.helpers.review import article_payload
from tests.helpers.served import AGENT, served_process

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


@pytest.fixture
def archive(make_app, tmp_path):
    """An archive of another instance (SQLite: an archive restores into either store), one task in it."""
    source = make_app(**folders(tmp_path / "source"), DATABASE_URL="")
    populate(source, "备份里的任务")
    path = tmp_path / "backup.tar.gz"
    assert source.test_cli_runner().invoke(args=["backup", str(path)]).exit_code == 0
    db.obj.close_all()
    return path


def _topics(base):
    answer = requests.get(f"{base}/api/review/agent/tasks", headers=AGENT, timeout=10)
    assert answer.status_code == 200 and isinstance(answer.json(), list), (answer.headers, answer.text)
    return sorted(task["topic"] for task in answer.json())


def _create(base, topic):
    answer = requests.post(
        f"{base}/api/review/agent/tasks", json=article_payload(topic=topic), headers=AGENT, timeout=30
    )
    assert answer.status_code == 201, answer.text
    return answer


@pytest.mark.parametrize("server_kind", ["app.py", "waitress-serve"])
def test_restore_refuses_while_a_service_holds_the_instance(archive, tmp_path, database_url, server_kind):
    root = tmp_path / "target"
    with served_process(root, server_kind, DATABASE_URL=database_url) as (base, server):
        _create(base, "服务里的任务")
        for options in ([], ["--force"]):
            refused = run_restore(root, archive, *options, database_url=database_url)
            assert refused.returncode == 2, (options, refused.returncode, refused.stdout, refused.stderr[-2000:])
            assert "restored" not in refused.stdout
            assert f"pid {server.pid}" in refused.stderr and socket.gethostname() in refused.stderr, refused.stderr
            assert "stop" in refused.stderr, refused.stderr
        # Nothing changed, and the service goes on: a task created now is kept (before, it was lost).
        assert _topics(base) == ["服务里的任务"]
        _create(base, "之后的任务")
        assert _topics(base) == ["之后的任务", "服务里的任务"]
    with served_process(root, DATABASE_URL=database_url) as (base, _server):
        assert _topics(base) == ["之后的任务", "服务里的任务"]  # after a restart too
    # Stopped, the same restore goes through (an instance with tasks needs --force).
    done = run_restore(root, archive, "--force", database_url=database_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "restored" in done.stdout
    with served_process(root, DATABASE_URL=database_url) as (base, _server):
        assert _topics(base) == ["备份里的任务"]


def test_a_service_on_another_host_holds_the_postgresql_database(archive, tmp_path, store, database_url):
    """Processes on other hosts share the database, not the instance folder: the restore is refused by the
    database's lock alone (another folder plays the other host), naming the process by its session."""
    if store != "postgresql":
        pytest.skip("an SQLite database lives in the instance folder")
    with served_process(tmp_path / "web-1", DATABASE_URL=database_url) as (base, server):
        _create(base, "服务里的任务")
        refused = run_restore(tmp_path / "web-2", archive, "--force", database_url=database_url)
        assert refused.returncode == 2, (refused.returncode, refused.stdout, refused.stderr[-2000:])
        assert f"pid {server.pid} on {socket.gethostname()}" in refused.stderr, refused.stderr
        assert _topics(base) == ["服务里的任务"]
    done = run_restore(tmp_path / "web-2", archive, "--force", database_url=database_url)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_service_killed_does_not_block_a_restore(archive, tmp_path, database_url):
    """What a killed process left behind does not hold the instance: the lock ends with the process."""
    root = tmp_path / "target"
    with served_process(root, DATABASE_URL=database_url) as (base, server):
        _create(base, "服务里的任务")
        server.kill()
        server.wait(timeout=30)
    done = run_restore(root, archive, "--force", database_url=database_url)
    assert done.returncode == 0, done.stderr[-2000:]


def test_copy_to_refuses_while_a_service_holds_the_instance(tmp_path, postgres_cluster):
    """copy-to reads a stopped instance (docs/api.md §11): beside a live one, the rows written after the
    copy would be lost on the switch, so it refuses too."""
    target = postgres_cluster.url(postgres_cluster.create_database())
    root = tmp_path / "source"
    with served_process(root) as (base, server):
        _create(base, "服务里的任务")
        env = {**os.environ, **folders(root), "DATABASE_URL": ""}
        refused = subprocess.run(
            [sys.executable, "-m", "flask", "--app", "app", "copy-to", target],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert refused.returncode != 0, refused.stdout
        assert f"pid {server.pid}" in refused.stderr and "stop" in refused.stderr, refused.stderr
    copied = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "copy-to", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert copied.returncode == 0, copied.stderr[-2000:]
