"""A restore killed at any step leaves the old instance or the new one, never a mix (docs/api.md §16
"Restore, continued"): `flask --app app restore` runs in a process of its own and ends itself at the
step REVIEW_RESTORE_FAULT names (os._exit, as a kill would); the next start finishes or undoes it.
An instance is (its tasks, its secret_key, its uploaded files); the old and the new one differ in all three."""

import os
import shutil

import pytest

from app import create_app
from models import ReviewTask, db
from models.base import stop_background
from services.operations.restore import restore_backup
from services.operations.restore_journal import FAULT_EXIT
from services.settings import Settings
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.restore import folders, populate, run_restore, topics, uploaded

# The restore's steps in order: a kill up to "staged" leaves the old instance, from "journal" on the new.
BEFORE = ["unpacked", "staged"]
AFTER = [
    "journal",
    *(f"{verb}:{name}" for name in ("instance/review.db-wal", "instance/review.db-shm") for verb in ("aside",)),
    *(
        f"{verb}:{name}"
        for name in (
            "instance/review.db",
            "instance/secret_key",
            "uploads/review",
            "uploads/library",
            "uploads/feedback",
        )
        for verb in ("aside", "in")
    ),
    "swapped",
    "ended",
]


def _app(root, **overrides):
    return create_app(
        {
            "TESTING": True,
            "DATABASE_URL": "",
            **folders(root),
            "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
            "FEEDBACK_CLIENT_TOKENS": "web=client-web-token",
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "FEEDBACK_INDEXER_ENABLED": False,
            "WAL_CHECKPOINTER_ENABLED": False,
            "WECHAT_LIVE_WORKER_ENABLED": False,
            "WECHAT_EDITIONS_ENABLED": False,
            "WECHAT_STATS_ENABLED": False,
            "WECHAT_COMMENTS_ENABLED": False,
            **overrides,
        },
        serve=True,
    )


def _close():
    stop_background()  # no worker keeps a connection that is closed under it
    if hasattr(db.obj, "close_all"):
        db.obj.close_all()


def _state(root, rows):
    """(tasks, secret key, uploaded files) of the instance in `root`."""
    return rows, (root / "instance" / "secret_key").read_text(), uploaded(root)


def _leftovers(root):
    return [str(path) for path in root.rglob(".restore*")]


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """The archive of a new instance, an old instance to restore it over, and what each holds."""
    root = tmp_path_factory.mktemp("sets")
    new = _app(root / "new")
    populate(new, "新的一套", width=800)
    archive = root / "new.tar.gz"
    assert new.test_cli_runner().invoke(args=["backup", str(archive)]).exit_code == 0
    populate(_app(root / "old"), "旧的一套", width=700)
    _close()
    return {
        "root": root,
        "archive": archive,
        "new": _state(root / "new", topics(root / "new" / "instance")),
        "old": _state(root / "old", topics(root / "old" / "instance")),
    }


@pytest.mark.parametrize("step", BEFORE + AFTER)
def test_a_sqlite_restore_killed_at_any_step_is_finished_or_undone_at_the_next_start(sets, tmp_path, step):
    target = tmp_path / "target"
    shutil.copytree(sets["root"] / "old", target)
    killed = run_restore(target, sets["archive"], "--force", fault=step)
    assert killed.returncode == FAULT_EXIT, (killed.returncode, killed.stderr[-2000:])
    _app(target)  # the next start
    _close()
    assert _state(target, topics(target / "instance")) == sets["old" if step in BEFORE else "new"]
    assert _leftovers(target) == []


def test_a_restore_interrupted_between_two_renames_is_finished_at_the_next_start(sets, tmp_path, monkeypatch):
    """Ctrl-C between the swap's renames (before, the new database stayed beside the old secret key)."""
    target = tmp_path / "target"
    shutil.copytree(sets["root"] / "old", target)
    app = _app(target)
    _close()
    real, calls = os.replace, []

    def interrupted(source, destination):
        calls.append(destination)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(source, destination)

    monkeypatch.setattr(os, "replace", interrupted)
    result = app.test_cli_runner().invoke(args=["restore", str(sets["archive"]), "--force"])
    monkeypatch.undo()
    assert result.exit_code == 1 and "Aborted" in result.output and len(calls) == 4
    _app(target)
    _close()
    assert _state(target, topics(target / "instance")) == sets["new"]
    assert _leftovers(target) == []


def test_the_next_restore_finishes_a_killed_one_first(sets, tmp_path):
    target = tmp_path / "target"
    shutil.copytree(sets["root"] / "old", target)
    assert run_restore(target, sets["archive"], "--force", fault="in:instance/secret_key").returncode == FAULT_EXIT
    settings = Settings.with_defaults(folders(target))
    restore_backup(settings, str(sets["archive"]), force=True)
    assert _state(target, topics(target / "instance")) == sets["new"]
    assert _leftovers(target) == []


def _pg_topics():
    with db.connection_context():
        topics = sorted(task.topic for task in ReviewTask.select())
    _close()
    return topics


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "step",
    ["staged", "journal", "in:instance/secret_key", "aside:uploads/library", "in:uploads/feedback", "rows", "ended"],
)
def test_a_postgresql_restore_killed_at_any_step_is_finished_or_undone_at_the_next_start(
    sets, postgres_cluster, tmp_path, step
):
    url = postgres_cluster.url(postgres_cluster.create_database())
    target = tmp_path / "target"
    try:
        populate(_app(target, DATABASE_URL=url), "旧的一套", width=700)
        old = _state(target, _pg_topics())
        killed = run_restore(target, sets["archive"], "--force", fault=step, database_url=url)
        assert killed.returncode == FAULT_EXIT, (killed.returncode, killed.stderr[-2000:])
        _app(target, DATABASE_URL=url)  # the next start
        after = _state(target, _pg_topics())
    finally:
        _close()
    assert after == (old if step == "staged" else sets["new"])
    assert _leftovers(target) == []
