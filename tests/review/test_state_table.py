"""The state tables are the only gate: every trigger the code uses has a row, and a row taken away
refuses its request (publish, retry, delete, job retry) with 409 invalid_state and changes nothing."""

import ast
from datetime import timedelta
from pathlib import Path

import pytest

from models import db
from rules.ids import utcnow
from services.errors import Conflict
from services.live import worker
from services.publishing.jobs import TRIGGERS
from services.review import state_machine
from tests.helpers.app import assert_error
from tests.helpers.publishing import approved_article, go_live_url, publish, publish_url, published_article, retry_url

ROOT = Path(__file__).resolve().parents[2]
GATES = ("rule_for", "find_rule", "fire", "job_rule_for", "live_rule_for", "find_live_rule", "move")


@pytest.fixture
def app(platform_app):
    """The service pointed at the fake platform (tests/conftest.py)."""
    return platform_app


def _triggers_in_code():
    """String triggers passed to the gate functions anywhere in services/."""
    for path in (ROOT / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in GATES and len(node.args) > 1:
                for part in ast.walk(node.args[1]):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        yield part.value


def test_every_trigger_the_code_uses_has_a_row():
    rows = {rule.trigger for rule in (*state_machine.TABLE, *state_machine.JOB_TABLE, *state_machine.LIVE_TABLE)}
    used = {*_triggers_in_code(), *TRIGGERS.values(), *state_machine.PATCH_TRIGGERS, *state_machine.DECISION_TRIGGERS}
    assert {
        "publish",
        "auto_publish",
        "retry",
        "delete",
        "finish_failed",
        "abandon",
        "schedule",
        "submit",
        "no_result",
    } <= used
    assert used - rows == set()


def _without(monkeypatch, index, state, trigger):
    table = getattr(state_machine, index)
    assert (state, trigger) in table
    monkeypatch.setattr(state_machine, index, {key: rule for key, rule in table.items() if key != (state, trigger)})


def test_without_the_publish_row_an_approved_task_is_not_published(app, admin_client, agent_headers, fake, monkeypatch):
    task, _ = approved_article(app, admin_client, agent_headers)
    _without(monkeypatch, "_INDEX", "approved", "publish")
    assert_error(admin_client.post(publish_url(task)), 409, "invalid_state")
    assert fake.requests == []
    monkeypatch.undo()
    assert publish(admin_client, task).get_json()["status"] == "published"


@pytest.mark.parametrize(
    ("index", "state", "trigger"), [("_INDEX", "approved", "retry"), ("_JOB_INDEX", "failed", "retry")]
)
def test_without_a_retry_row_a_failed_job_is_not_retried(
    app, admin_client, agent_headers, fake, monkeypatch, index, state, trigger
):
    task, _ = approved_article(app, admin_client, agent_headers)
    fake.fail_next("draft/add", errcode=45009, errmsg="reach max api daily quota limit")
    failed = publish(admin_client, task).get_json()
    job = failed["publishJobs"][0]
    assert job["status"] == "failed"
    _without(monkeypatch, index, state, trigger)
    assert_error(admin_client.post(retry_url(failed, job)), 409, "invalid_state")
    assert len(admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["publishJobs"]) == 1
    monkeypatch.undo()
    assert admin_client.post(retry_url(failed, job)).get_json()["status"] == "published"


def test_without_the_delete_row_no_task_is_deleted(app, admin_client, agent_headers, fake, monkeypatch):
    task, _ = approved_article(app, admin_client, agent_headers)
    _without(monkeypatch, "_INDEX", state_machine.ANY, "delete")
    assert_error(admin_client.delete(f"/api/review/tasks/{task['id']}"), 409, "invalid_state")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").status_code == 200
    monkeypatch.undo()
    assert admin_client.delete(f"/api/review/tasks/{task['id']}").status_code == 200


def test_going_live_moves_only_along_rows_of_its_table(app, admin_client, agent_headers, monkeypatch):
    task = published_article(app, admin_client, agent_headers)
    _without(monkeypatch, "_LIVE_INDEX", None, "schedule")
    assert_error(admin_client.post(go_live_url(task), json={}), 409, "invalid_state")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"] is None
    monkeypatch.undo()
    at = (utcnow() + timedelta(hours=1)).isoformat()
    assert admin_client.post(go_live_url(task), json={"at": at}).status_code == 202
    _without(monkeypatch, "_LIVE_INDEX", "scheduled", "cancel")
    assert_error(admin_client.delete(go_live_url(task)), 409, "invalid_state")
    _without(monkeypatch, "_LIVE_INDEX", "scheduled", "submit")
    with db.connection_context(), pytest.raises(Conflict):
        worker.claim_due()
    monkeypatch.undo()
    assert admin_client.delete(go_live_url(task)).get_json()["live"]["status"] == "canceled"


def test_the_document_shows_every_row():
    text = (ROOT / "docs" / "review-states.md").read_text()
    assert text == state_machine.render_markdown()
    for rule in (*state_machine.TABLE, *state_machine.JOB_TABLE, *state_machine.LIVE_TABLE):
        assert f"| `{rule.trigger}` | {rule.condition} |" in text
