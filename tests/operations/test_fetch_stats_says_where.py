"""`flask --app app fetch-stats` says which database it works on, as the admin commands do (docs/api.md §19):
run from another folder, it is another instance, and a backfill into it would go unnoticed."""

import pytest

pytestmark = pytest.mark.both_stores


def test_fetch_stats_prints_the_database_it_works_on(app, runner, store):
    where = f"{app.instance_path}/review.db" if store == "sqlite" else "the DATABASE_URL database"
    result = runner.invoke(args=["fetch-stats", "--date", "2026-11-25"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"database: {where}"
    assert "nothing fetched" in result.output
