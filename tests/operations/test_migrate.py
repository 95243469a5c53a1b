"""`flask --app app copy-to DATABASE_URL`: a populated SQLite instance moved to PostgreSQL keeps every
count and every task's and feedback record's answer exactly."""

import pytest

from models import db
from models.row_copy import row_counts
from tests.helpers.app import AGENT_TOKEN, login
from tests.helpers.feedback import payload, submit
from tests.helpers.publishing import platform_settings
from tests.helpers.review import article_payload, create_task
from tests.helpers.store_copy import answers, populate

AGENT = {"x-review-agent-token": AGENT_TOKEN}


@pytest.mark.timeout(180)
def test_a_populated_instance_moves_to_postgresql_unchanged(make_app, postgres_cluster, fake):
    app = make_app(**platform_settings(fake))
    task_ids, feedback_ids = populate(app, fake)
    with db.connection_context():
        before_counts = row_counts()
    before = answers(app, task_ids, feedback_ids)
    assert before_counts["review_task"] == 3 and before_counts["feedback_attachment"] == 1
    assert before_counts["outbox_message"] >= 2 and before_counts["publish_job"] == 1

    name = postgres_cluster.create_database()
    url = postgres_cluster.url(name)
    result = app.test_cli_runner().invoke(args=["copy-to", url])
    assert result.exit_code == 0, result.output
    assert f"{sum(before_counts.values()) - before_counts['schema_version']} rows" in result.output

    moved = make_app(**platform_settings(fake), DATABASE_URL=url)
    with db.connection_context():
        assert row_counts() == before_counts
    assert answers(moved, task_ids, feedback_ids) == before
    # The moved instance goes on working: new rows get new ids after the copied ones.
    admin = moved.test_client()
    login(admin)
    newer = create_task(admin, AGENT, article_payload())
    assert admin.get(f"/api/review/tasks/{newer['id']}").status_code == 200
    created = submit(moved.test_client(), payload(title="迁移之后", content="新的反馈"))
    assert created.status_code == 201 and created.get_json()["feedbackNo"].endswith("-0004")

    again = moved.test_cli_runner().invoke(args=["copy-to", url])
    assert again.exit_code != 0 and "already holds" in again.output  # never into a database in use
    bad = app.test_cli_runner().invoke(args=["copy-to", "mysqlx://nowhere/db"])
    assert bad.exit_code != 0 and "DATABASE_URL must start with" in bad.output


def test_migrate_to_is_a_hidden_deprecated_name_of_copy_to(make_app):
    app = make_app()
    runner = app.test_cli_runner()
    listed = runner.invoke(args=["--help"]).output
    assert "copy-to" in listed and "migrate-to" not in listed
    old = runner.invoke(args=["migrate-to", "mysqlx://nowhere/db"])
    new = runner.invoke(args=["copy-to", "mysqlx://nowhere/db"])
    assert old.exit_code == new.exit_code != 0
    assert "migrate-to is deprecated: use `flask --app app copy-to DATABASE_URL`" in old.output
    assert "DATABASE_URL must start with" in old.output and "deprecated" not in new.output
