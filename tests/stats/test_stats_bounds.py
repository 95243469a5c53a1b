"""Readers' figures bounded and honest (docs/api.md §19, issue 41): every figure a whole number from 0 to
10^12, dates exactly YYYY-MM-DD from the day the article went live to the day fetched, a malformed or
oversized answer a failed fetch (never left running, never stopping the other accounts), one webhook per
task and day ever, and a task list that old out-of-range figures can no longer break."""

import json
from datetime import date, timedelta

import pytest

from models import OutboxMessage, StatsFetch, TaskDayStats, db
from services.stats import fetching
from tests.helpers.publishing import live_task, yesterday

pytestmark = pytest.mark.both_stores


def _msgid(task):
    from models.live import TaskLive
    from models.review import ReviewTask

    with db.connection_context():
        row = TaskLive.select().join(ReviewTask).where(ReviewTask.task_id == task["id"]).get()
        return f"{row.msg_data_id}_1"


def _days(admin_client, task):
    return [
        (d["date"], d["readUser"]) for d in admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["days"]
    ]


def _fetch(app, day, account="silicon-rise"):
    with db.connection_context():
        return fetching.fetch_day(account, day, app.extensions["settings"], force=True)


def test_only_plain_dates_in_the_articles_days_and_bounded_figures_are_kept(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=3)  # only the item below is in the answer
    day = yesterday(app)
    shift = lambda n: (date.fromisoformat(day) + timedelta(days=n)).isoformat()  # noqa: E731
    fake.extra_totals.append(
        {
            "ref_date": shift(-2),
            "msgid": _msgid(task),
            "detail_list": [  # running totals: each day's own figure is the difference
                {"stat_date": shift(-1), "read_user": 10**12 - 7},
                {"stat_date": day, "read_user": 10**12},  # the largest figure taken
                {"stat_date": shift(-2).replace("-", ""), "read_user": 1},  # 20261125
                {"stat_date": "2026-W48-3", "read_user": 1},
                {"stat_date": shift(-30), "read_user": 1},  # before the article went live
                {"stat_date": shift(1), "read_user": 1},  # after the day fetched
                {"stat_date": shift(-2), "read_user": 2**62},
                {"stat_date": shift(-2), "read_user": 2**63},
                {"stat_date": shift(-2), "read_user": -1},
                {"stat_date": shift(-2), "read_user": True},
                {"stat_date": shift(-2), "read_user": 1.5},
                {"stat_date": shift(-2), "read_user": "9"},
                "not an entry",
            ],
        }
    )
    result = _fetch(app, day)
    assert result["error"] is None and result["stored"] == 2, result
    assert _days(admin_client, task) == [(shift(-1), 10**12 - 7), (day, 7)]
    assert admin_client.get("/review?status=all").status_code == 200


@pytest.mark.parametrize(
    "answer",
    [
        {"list": [{"msgid": "x_1", "detail_list": 5}]},
        {"list": 5},
        {"list": ["an item"]},
    ],
)
def test_a_malformed_answer_fails_the_fetch_and_the_other_accounts_go_on(
    app, admin_client, agent_headers, fake, answer
):
    from tests.helpers.publishing import go_live_url, published_article, wait_for_live, went_live_days_ago

    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)  # silicon-rise; carbon-fitness below

    carbon = published_article(app, admin_client, agent_headers, account="carbon-fitness")
    assert admin_client.post(go_live_url(carbon), json={}).status_code == 202
    assert wait_for_live(admin_client, carbon)["live"]["status"] == "live"
    went_live_days_ago(carbon["id"], 1, fake)
    day = yesterday(app)
    fake.fail_next("getarticletotaldetail", status=200, body=json.dumps(answer), content_type="application/json")
    with db.connection_context():
        results = {r["account"]: r for r in fetching.daily_step(app.extensions["settings"])}
        rows = {row.account: row for row in StatsFetch.select().where(StatsFetch.day == day)}
    failed = [r for r in results.values() if r["error"]]
    assert len(failed) == 1 and len(results) == 2, results
    assert rows[failed[0]["account"]].status == "failed" and rows[failed[0]["account"]].last_error
    assert {row.status for row in rows.values()} == {"failed", "done"}  # never left running
    [ok] = [r for r in results.values() if not r["error"]]
    assert ok["stored"] == 1, ok


def test_an_answer_over_4_mib_is_a_failed_fetch(app, admin_client, agent_headers, fake):
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    padding = [{"msgid": f"{n}_1", "detail_list": []} for n in range(120_000)]
    body = json.dumps({"list": padding})
    assert len(body) > 4 * 2**20
    fake.fail_next("getarticletotaldetail", status=200, body=body, content_type="application/json")
    result = _fetch(app, day)
    assert result["stored"] == 0 and "more than 4 MiB" in result["error"], result
    with db.connection_context():
        assert StatsFetch.get(StatsFetch.day == day).status == "failed"


def test_one_webhook_per_task_and_day_ever(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    for reads in (5, 6, 7):
        fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": reads}
        assert _fetch(app, day)["stored"] == 1
    with db.connection_context():
        sent = OutboxMessage.select().where(OutboxMessage.event_type == "review_task.stats").count()
    assert sent == 1 and _days(admin_client, task) == [(day, 7)]


def test_figures_stored_before_they_were_bounded_no_longer_break_the_list(
    make_app, tmp_path, agent_headers, database_url
):
    """A figure of 2^62 made every /review?status=all answer 500 (the sum overflowed); the upgrade to
    schema 16 clears such figures."""
    from models import ReviewTask
    from models.schema import SchemaVersion
    from tests.helpers.app import built_app, signed_in_admin
    from tests.helpers.review import article_payload, create_task

    with built_app(make_app) as first:
        task = create_task(first.test_client(), agent_headers, article_payload())
        with db.connection_context():
            task_pk = ReviewTask.get(ReviewTask.task_id == task["id"]).id
            for day in ("2026-11-01", "2026-11-02"):
                TaskDayStats.create(task=task_pk, day=day, read_user=2**62, fetched_at="2026-11-03T00:00:00.000Z")
            SchemaVersion.update(version=15).execute()
    with built_app(make_app) as second:
        client = signed_in_admin(second)
        assert client.get("/review?status=all").status_code == 200
        with db.connection_context():
            assert [row.read_user for row in TaskDayStats.select()] == [None, None]
