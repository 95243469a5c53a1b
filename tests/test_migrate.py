"""`flask --app app migrate-to DATABASE_URL`: a populated SQLite instance moved to PostgreSQL keeps every
count and every task's and feedback record's answer exactly."""
import io

import pytest

from models import db
from models.migration import row_counts
from tests import test_publishing as base
from tests.conftest import AGENT_TOKEN, create_admin, login
from tests.review_helpers import article_payload, create_task, decision_url, make_asset, patch_url
from tests.test_feedback_helpers import WEB, payload, submit
from tests.test_publishing import approved_article, platform_settings, publish

fake = base.fake  # the fixture: a running fake platform
AGENT = {"x-review-agent-token": AGENT_TOKEN}


def populate(app, fake):
    """Tasks in every state (a published one with its job, a reworked one), feedback with an
    attachment, assets, two admins, outbox messages."""
    create_admin()
    create_admin("triage", permissions="feedback")
    admin = app.test_client()
    login(admin)
    published, _ = approved_article(app, admin, AGENT)
    publish(admin, published)
    cover = make_asset(app, 900, 500)
    pending = create_task(admin, AGENT, article_payload([cover["url"]]))
    reworked = create_task(admin, AGENT, article_payload([cover["url"]]))
    assert admin.post(decision_url(reworked), json={"action": "reject_rework", "rejectionReason": "other",
                                                     "rejectionNote": "整体重写"}).status_code == 200
    assert admin.patch(patch_url(reworked), json={"title": "改过的标题"}, headers=AGENT).status_code == 200
    feedback = [submit(app.test_client(), payload(title=f"问题 {n}", content=f"内容 {n}")).get_json()
                for n in range(3)]
    attached = app.test_client().post(f"/api/feedbacks/{feedback[0]['id']}/attachments", headers=WEB, data={
        "kind": "log_file", "file": (io.BytesIO(b"log line\n"), "app.log", "text/plain")})
    assert attached.status_code == 201, attached.get_json()
    assert admin.patch(f"/api/feedbacks/{feedback[1]['id']}/status",
                       json={"status": "processed", "adminNote": "已修复"}).status_code == 200
    return [published["id"], pending["id"], reworked["id"]], [f["id"] for f in feedback]


def answers(app, task_ids, feedback_ids):
    admin = app.test_client()
    login(admin)
    tasks = {task_id: admin.get(f"/api/review/tasks/{task_id}").get_json() for task_id in task_ids}
    records = {fid: admin.get(f"/api/feedbacks/{fid}").get_json() for fid in feedback_ids}
    listing = admin.get("/api/review/tasks?status=all").get_json()
    return tasks, records, [task["id"] for task in listing]


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
    result = app.test_cli_runner().invoke(args=["migrate-to", url])
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

    again = moved.test_cli_runner().invoke(args=["migrate-to", url])
    assert again.exit_code != 0 and "already holds" in again.output  # never into a database in use
    bad = app.test_cli_runner().invoke(args=["migrate-to", "mysqlx://nowhere/db"])
    assert bad.exit_code != 0 and "DATABASE_URL must start with" in bad.output
