"""What readers did (docs/api.md §19): the daily fetch, its errors and retries, the backfill command,
the API, the agent's webhook and the MCP tool."""

from datetime import datetime, timedelta

import pytest
from standardwebhooks import Webhook

from models import OutboxMessage, StatsFetch, db
from services.stats import fetching
from tests.helpers.app import AGENT_TOKEN, assert_error
from tests.helpers.publishing import STATS_SECRET, live_task, published_article, yesterday

pytestmark = pytest.mark.both_stores

NO_FIGURES = {
    "readUser": None,
    "shareUser": None,
    "likeUser": None,
    "zaikanUser": None,
    "collectionUser": None,
    "commentCount": None,
}


def stats(client, task, headers=None):
    answer = client.get(f"/api/review/tasks/{task['id']}/stats", headers=headers or {})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def article_id(task, admin_client):
    return admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]["articleId"]


def test_the_daily_job_fetches_yesterday_once_and_figures_land_on_their_tasks(
    app, admin_client, agent_headers, fake, receiver
):
    first = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    second = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    fake.day_figures[(first["live"]["articleId"], day)] = {
        "read_user": 120,
        "share_user": 7,
        "like_user": 9,
        "zaikan_user": 3,
        "collection_user": 5,
        "comment_count": 2,
    }
    fake.day_figures[(second["live"]["articleId"], day)] = {"read_user": 40, "share_user": 1}  # the rest absent
    settings = app.extensions["settings"]
    with db.connection_context():
        results = fetching.daily_step(settings)
        assert [r["stored"] for r in results] == [2] and results[0]["day"] == day
        assert fetching.daily_step(settings) == []  # done: a second pass (or process) does not fetch again
    calls = fake.requests_to("getarticletotaldetail")
    assert len(calls) == 1 and calls[0]["json"] == {"begin_date": day, "end_date": day}
    one = stats(admin_client, first)
    assert one["days"] == [
        {
            "date": day,
            "readUser": 120,
            "shareUser": 7,
            "likeUser": 9,
            "zaikanUser": 3,
            "collectionUser": 5,
            "commentCount": 2,
        }
    ]
    assert one["totals"]["readUser"] == 120 and one["articleUrl"] == first["live"]["articleUrl"]
    two = stats(admin_client, second, headers={"x-review-agent-token": AGENT_TOKEN})  # the agent reads it too
    assert two["days"] == [{**NO_FIGURES, "date": day, "readUser": 40, "shareUser": 1}]
    assert two["totals"] == {**NO_FIGURES, "readUser": 40, "shareUser": 1}
    # The agent hears once per task and day, signed as every other webhook.
    assert receiver.wait_for(2, timeout=15)
    bodies = [Webhook(STATS_SECRET).verify(body, headers) for headers, body in receiver.received]
    by_task = {body["data"]["taskId"]: body for body in bodies}
    assert set(by_task) == {first["id"], second["id"]}
    assert by_task[first["id"]]["type"] == "review_task.stats"
    assert by_task[first["id"]]["data"]["date"] == day
    assert by_task[first["id"]]["data"]["day"]["readUser"] == 120
    assert by_task[second["id"]]["data"]["totals"]["likeUser"] is None


def test_a_refetch_replaces_and_never_double_counts(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    runner = app.test_cli_runner()
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 10}
    result = runner.invoke(args=["fetch-stats", "--date", day])
    assert result.exit_code == 0 and f"silicon-rise {day}: stored 1" in result.output, result.output
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 15, "like_user": 2}
    result = runner.invoke(args=["fetch-stats", "--date", day, "--account", "silicon-rise"])
    assert result.exit_code == 0, result.output
    figures = stats(admin_client, task)
    assert [d["readUser"] for d in figures["days"]] == [15] and figures["totals"]["readUser"] == 15
    with db.connection_context():  # the agent heard of the day once
        assert OutboxMessage.select().where(OutboxMessage.event_type == "review_task.stats").count() == 1


def test_the_command_backfills_a_given_day(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=3, fake=fake)
    runner = app.test_cli_runner()
    today = datetime.now(app.extensions["settings"].time_zone).date()  # the team's day, not the machine's
    days = [(today - timedelta(days=n)).isoformat() for n in (3, 2)]
    for day in days:
        assert runner.invoke(args=["fetch-stats", "--date", day]).exit_code == 0
    figures = stats(admin_client, task)
    assert [d["date"] for d in figures["days"]] == days  # ascending
    assert figures["totals"]["readUser"] == sum(d["readUser"] for d in figures["days"])
    bad = runner.invoke(args=["fetch-stats", "--date", "yesterday"])
    assert bad.exit_code != 0 and "not a date" in bad.output
    other = runner.invoke(args=["fetch-stats", "--date", days[0], "--account", "nobody"])
    assert other.exit_code != 0 and "silicon-rise" in other.output


@pytest.mark.parametrize(
    ("errcode", "meaning"), [(61500, "date format"), (61501, "range"), (48001, "no permission"), (45009, "quota")]
)
def test_errors_are_recorded_with_their_meaning_and_retried_at_most_three_times(
    app, admin_client, agent_headers, fake, monkeypatch, errcode, meaning
):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    monkeypatch.setattr(fetching, "RETRY_AFTER", timedelta(0))  # retries come at once here
    fake.fail_next("getarticletotaldetail", errcode=errcode, errmsg="refused", times=10)
    settings = app.extensions["settings"]
    with db.connection_context():
        for _ in range(5):
            fetching.daily_step(settings)
        row = StatsFetch.get()
    assert len(fake.requests_to("getarticletotaldetail")) == 3
    assert (row.status, row.attempts) == ("failed", 3) and meaning in row.last_error and str(errcode) in row.last_error
    figures = stats(admin_client, task)
    assert figures["days"] == [] and meaning in figures["lastError"]


def test_a_task_that_never_went_live_has_no_days_and_an_unknown_one_is_404(app, admin_client, agent_headers):
    task = published_article(app, admin_client, agent_headers)
    assert stats(admin_client, task) == {"articleUrl": None, "days": [], "totals": NO_FIGURES, "lastError": None}
    assert_error(admin_client.get("/api/review/tasks/nope/stats"), 404, "not_found")
    assert_error(app.test_client().get(f"/api/review/tasks/{task['id']}/stats"), 401, "unauthorized")


def test_nothing_is_fetched_before_the_hour(app, admin_client, agent_headers, fake):
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    settings = app.extensions["settings"]
    late = datetime.now(settings.time_zone).replace(hour=8, minute=59)
    assert fetching.due_day(settings.__class__.from_config({**app.config, "WECHAT_STATS_HOUR": 9}), late) is None
    assert (
        fetching.due_day(
            settings.__class__.from_config({**app.config, "WECHAT_STATS_HOUR": 9}), late + timedelta(minutes=1)
        )
        == (late.date() - timedelta(days=1)).isoformat()
    )
