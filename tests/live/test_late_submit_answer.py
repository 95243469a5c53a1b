"""A submission's answer applies only to that submission (docs/api.md §18): go_live resets a row's status,
publish_id, failure and polls to the same values each time, so only `submitted_at` tells two apart."""

import pytest

from models import db
from models.live import TaskLive
from services.live import worker
from services.live.outcomes import move
from tests.helpers.publishing import go_live_url, published_article

pytestmark = pytest.mark.both_stores


@pytest.fixture
def app(platform_app):
    """Live worker off: the test runs the claim and the answer itself."""
    return platform_app


def test_a_late_submit_answer_never_lands_on_a_newer_submission(app, admin_client, agent_headers):
    task = published_article(app, admin_client, agent_headers)
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    with db.connection_context():
        first = worker.claim_due()
        assert first is not None and first.status == "submitting"
        # That process stopped; the submission was given up and asked again, and another one claimed it.
        TaskLive.update(submitted_at="2099-01-01T00:00:00.000Z").where(TaskLive.id == first.id).execute()
        newer = TaskLive.get_by_id(first.id)
        assert (newer.status, newer.publish_id, newer.fail_code, newer.polls) == ("submitting", None, None, 0)
        assert move(first, "submitted", None, publish_id="LATE", msg_data_id="1") is None
        assert TaskLive.get_by_id(first.id).status == "submitting"
