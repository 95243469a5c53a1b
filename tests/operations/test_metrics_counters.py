"""Counters of /metrics counted at the event (docs/api.md §16): deleting what they counted never lowers them."""

import pytest

from tests.helpers.metrics import BEARER, TOKEN, scrape, value
from tests.helpers.publishing import approved_article, platform_settings, publish


@pytest.fixture
def app(make_app, fake):
    return make_app(**platform_settings(fake), METRICS_TOKEN=TOKEN)


def test_a_deleted_task_does_not_lower_the_publish_job_counter(app, admin_client, agent_headers):
    task, _ = approved_article(app, admin_client, agent_headers)
    before = scrape(admin_client)
    assert publish(admin_client, task).get_json()["publishJobs"][0]["status"] == "succeeded"
    published = scrape(admin_client)
    assert (
        value(published, "review_publish_jobs_total", status="succeeded", trigger="manual")
        - value(before, "review_publish_jobs_total", status="succeeded", trigger="manual")
        == 1
    )

    deleted = admin_client.delete(f"/api/review/tasks/{task['id']}")
    assert deleted.status_code == 200, deleted.get_json()
    after = scrape(admin_client)
    assert value(after, "review_publish_jobs_total", status="succeeded", trigger="manual") == value(
        published, "review_publish_jobs_total", status="succeeded", trigger="manual"
    )
    assert admin_client.get("/metrics", headers=BEARER).status_code == 200
