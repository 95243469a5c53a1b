"""What readers did, read closely (docs/api.md §19): the webhook's totals are those up to its day, only
the message's first article is the task's, the command takes only YYYY-MM-DD, a failed fetch is shown in
the page's language and only for days since the article went live, and retries cut short by midnight
are still made."""

from datetime import date, timedelta

import pytest

from models import OutboxMessage, StatsFetch, db
from services.stats import fetching
from tests.helpers.publishing import live_task, yesterday

pytestmark = pytest.mark.both_stores


def _msg_data_id(app, task):
    from models.live import TaskLive
    from models.review import ReviewTask

    with db.connection_context():
        return TaskLive.select().join(ReviewTask).where(ReviewTask.task_id == task["id"]).get().msg_data_id


def _webhooks():
    with db.connection_context():
        return [
            m.payload["data"]
            for m in OutboxMessage.select()
            .where(OutboxMessage.event_type == "review_task.stats")
            .order_by(OutboxMessage.id)
        ]


def test_each_days_webhook_carries_the_totals_up_to_that_day(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=3, fake=fake)
    day = yesterday(app)
    earlier = [(date.fromisoformat(day) - timedelta(days=n)).isoformat() for n in (2, 1)]
    for stat_date, reads in zip((*earlier, day), (1, 10, 100), strict=True):  # readers' days; datacube sums them
        fake.day_figures[(task["live"]["articleId"], stat_date)] = {"read_user": reads}
    assert app.test_cli_runner().invoke(args=["fetch-stats", "--date", day]).exit_code == 0
    sent = {data["date"]: (data["day"]["readUser"], data["totals"]["readUser"]) for data in _webhooks()}
    assert sent == {earlier[0]: (1, 1), earlier[1]: (10, 11), day: (100, 111)}, sent


def test_only_the_messages_first_article_is_the_tasks(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 5}
    other_day = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
    fake.extra_totals.append(
        {
            "ref_date": day,
            "msgid": f"{_msg_data_id(app, task)}_2",
            "detail_list": [{"stat_date": other_day, "read_user": 999}],
        }
    )
    assert app.test_cli_runner().invoke(args=["fetch-stats", "--date", day]).exit_code == 0
    days = admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["days"]
    assert [(d["date"], d["readUser"]) for d in days] == [(day, 5)]


@pytest.mark.parametrize("value", ["20261125", "2026-W48-3", "2026-11-25T00:00", " 2026-11-25"])
def test_the_command_takes_only_a_plain_date(app, admin_client, agent_headers, fake, value):
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    refused = app.test_cli_runner().invoke(args=["fetch-stats", "--date", value])
    assert refused.exit_code != 0 and "not a date like 2026-11-25" in refused.output, refused.output
    assert fake.requests_to("getarticletotaldetail") == []


def test_a_failed_fetch_is_told_in_the_pages_language_and_only_since_going_live(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    with db.connection_context():  # a failure of the account's long before this article went live
        StatsFetch.create(
            account="silicon-rise",
            day="2020-01-01",
            status="failed",
            attempts=3,
            last_error="x",
            last_errcode=61501,
            updated_at="2099-01-01T00:00:00.000Z",
        )
    assert admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["lastError"] is None
    fake.fail_next("getarticletotaldetail", errcode=48001, errmsg="api unauthorized")
    day = yesterday(app)
    assert app.test_cli_runner().invoke(args=["fetch-stats", "--date", day]).exit_code == 1
    api = admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()
    assert api["lastError"] == f"{day}: the account may not read statistics through the API (48001: no permission)"
    admin_client.set_cookie("review_lang", "zh-CN")
    page = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    assert f"{day} 的数据获取失败：该公众号无权通过接口读取统计数据（48001：没有权限）" in page
    assert "no permission" not in page and "2020-01-01" not in page
    admin_client.set_cookie("review_lang", "en")
    page = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    assert f"Fetching the figures of {day} failed: the account may not read statistics" in page


@pytest.mark.parametrize("left", ["failed", "running"])
def test_retries_cut_short_by_midnight_are_still_made(app, admin_client, agent_headers, fake, left):
    task = live_task(app, admin_client, agent_headers, days_ago=2, fake=fake)
    day = yesterday(app)
    before = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
    with db.connection_context():  # the day before's fetch failed once late in its day, or its process stopped
        StatsFetch.create(
            account="silicon-rise",
            day=before,
            status=left,
            attempts=1,
            last_error="quota",
            last_errcode=45009,
            next_attempt_at="2000-01-01T00:00:00.000Z",
            updated_at="2000-01-01T00:00:00.000Z",
        )
        fetching.daily_step(app.extensions["settings"])
        assert StatsFetch.get(StatsFetch.day == before).status == "done"
    asked = [call["json"] for call in fake.requests_to("getarticletotaldetail")]  # each its publish day
    assert asked == [{"begin_date": before, "end_date": before}] * 2
    assert [d["date"] for d in admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["days"]] == [
        before,
        day,
    ]


def test_a_fetch_taken_over_meanwhile_stores_nothing(app, admin_client, agent_headers, fake, monkeypatch):
    from models import TaskDayStats

    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 7}
    read_answer = fetching.read_answer

    def taken_over(*args):  # the platform's answer was slow: another process took the fetch meanwhile
        StatsFetch.update(owner="another-process", attempts=StatsFetch.attempts + 1).execute()
        return read_answer(*args)

    monkeypatch.setattr(fetching, "read_answer", taken_over)
    with db.connection_context():
        fetching.fetch_day("silicon-rise", day, app.extensions["settings"])
        assert TaskDayStats.select().count() == 0
    assert _webhooks() == []


def test_a_stopped_fetch_out_of_attempts_ends_failed(app, admin_client, agent_headers, fake):
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    with db.connection_context():  # its process stopped during the last attempt
        StatsFetch.create(
            account="silicon-rise",
            day=day,
            status="running",
            attempts=fetching.MAX_ATTEMPTS,
            owner="gone",
            updated_at="2000-01-01T00:00:00.000Z",
        )
        fetching.daily_step(app.extensions["settings"])
        row = StatsFetch.get(StatsFetch.day == day)
    assert (row.status, row.last_error) == ("failed", "the process stopped")
    assert fake.requests_to("getarticletotaldetail") == []
