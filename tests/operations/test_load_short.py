"""The short load test for CI (issue 9, item 4): bench/load.py's mixed workload, 16 connections
for 5 s against the real service (waitress in its own process, bench/server.py) on a prepared
database. No timing claims here (bench/load.py measures those): every request succeeds, and
afterwards the database and the uploads folder hold exactly what the successful writes made.
"""

from pathlib import Path

import pytest

from app import create_app
from bench.common import Server
from bench.load import leftover_temp_files, run_load, system_temp_entries
from bench.seed import seed
from bench.settings import BENCH_CONFIG
from models import Asset, db
from models.feedback import Feedback
from models.review import ReviewTask, TimelineEvent

ROWS = 300
CONNECTIONS = 16
SECONDS = 5


@pytest.fixture
def served(tmp_path):
    instance, uploads = tmp_path / "instance", tmp_path / "uploads"
    ids = seed(instance, uploads, ROWS)
    if not db.is_closed():
        db.close()
    server = Server(instance, uploads)
    try:
        yield server, instance, uploads, ids
    finally:
        server.stop()


def successes(result, kind, status):
    return result["kinds"].get(kind, {}).get("statuses", {}).get(str(status), 0)


@pytest.mark.timeout(180)
def test_16_connections_for_5_seconds_without_errors_and_exact_counts(served):
    server, instance, uploads, ids = served
    temp_before = system_temp_entries()

    result = run_load([server.port], ROWS, CONNECTIONS, SECONDS, keyword=ids["keyword"])
    server.stop()

    assert result["errors"] == 0, result["errorSamples"]
    created, patched, deleted = (
        successes(result, "create_task", 201),
        successes(result, "patch_task", 200),
        successes(result, "delete_task", 200),
    )
    feedback, uploaded = successes(result, "create_feedback", 201), successes(result, "upload", 201)
    assert min(created, patched, deleted, feedback, uploaded) > 0, result["kinds"]  # every kind of write ran
    assert sum(k["count"] for k in result["kinds"].values()) == result["count"]

    app = create_app(
        {**BENCH_CONFIG, "REVIEW_INSTANCE_PATH": str(instance), "REVIEW_UPLOADS_PATH": str(uploads)}, serve=True
    )
    with db.connection_context():
        assert ReviewTask.select().count() == ROWS + created - deleted
        assert TimelineEvent.select().where(TimelineEvent.type == "draft_saved").count() == patched
        assert Feedback.select().count() == ROWS + feedback
        stored = {a.stored_name for a in Asset.select().where(Asset.scope == "review")}
    assert len(stored) == uploaded
    on_disk = {p.name for p in (Path(app.config["REVIEW_UPLOADS_PATH"]) / "review").iterdir()}
    assert on_disk == stored
    assert leftover_temp_files(instance, uploads, temp_before) == []
