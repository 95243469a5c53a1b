"""Readers' figures as the platform gives them (docs/api.md §19, issue 53 item 2):
getarticletotaldetail answers the contents PUBLISHED on the days asked, each detail_list entry the running
total from the publish day. So the service asks once per publish day of its live articles, stores each day's
own figure as the difference of two running totals, asks a day marked is_delay again, and an answer it cannot
read is one line, not a traceback (issue 52 item 7). All against the fake platform over HTTP."""

import logging
from datetime import date, timedelta

import pytest

from models import StatsFetch, db
from services.stats import fetching
from tests.helpers.publishing import live_task, yesterday

pytestmark = pytest.mark.both_stores


def _shift(day, n):
    return (date.fromisoformat(day) + timedelta(days=n)).isoformat()


def _stats(admin_client, task):
    return admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()


def _fetch(app, day):
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day])
    assert result.exit_code == 0, result.output
    return result.output


def test_an_article_published_monday_still_gets_tuesdays_and_wednesdays_figures(app, admin_client, agent_headers, fake):
    """Published on Monday (three days ago), fetched on Tuesday and on Wednesday: both days come, from the
    answer for Monday, each its own figure (the difference of two running totals)."""
    task = live_task(app, admin_client, agent_headers, days_ago=3, fake=fake)
    wednesday = yesterday(app)
    monday, tuesday = _shift(wednesday, -2), _shift(wednesday, -1)
    for day, reads, likes in ((monday, 120, 9), (tuesday, 45, 2), (wednesday, 12, 0)):
        fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": reads, "like_user": likes}
    _fetch(app, tuesday)
    assert [(d["date"], d["readUser"]) for d in _stats(admin_client, task)["days"]] == [(monday, 120), (tuesday, 45)]
    _fetch(app, wednesday)
    figures = _stats(admin_client, task)
    assert [(d["date"], d["readUser"], d["likeUser"]) for d in figures["days"]] == [
        (monday, 120, 9),
        (tuesday, 45, 2),
        (wednesday, 12, 0),
    ]
    # Each fetch asked for the contents published on Monday, never for the day fetched.
    assert [c["json"] for c in fake.requests_to("getarticletotaldetail")] == [
        {"begin_date": monday, "end_date": monday}
    ] * 2
    # The task's totals are the platform's latest running total (120 + 45 + 12), not a sum of totals.
    assert figures["totals"]["readUser"] == 177
    assert figures["totals"]["likeUser"] == 11


def test_a_running_total_that_falls_counts_as_nothing_that_day(app, admin_client, agent_headers, fake):
    """A day's own figure is never below 0 (the platform corrected a total down): the totals keep the
    highest running total, and a field the platform leaves out stays null."""
    task = live_task(app, admin_client, agent_headers, days_ago=3)  # only this item is in the answer
    day = yesterday(app)
    with db.connection_context():
        from models.live import TaskLive
        from models.review import ReviewTask

        msgid = f"{TaskLive.select().join(ReviewTask).where(ReviewTask.task_id == task['id']).get().msg_data_id}_1"
    fake.extra_totals.append(
        {
            "ref_date": _shift(day, -2),
            "msgid": msgid,
            "publish_type": 0,
            "detail_list": [
                {"stat_date": _shift(day, -2), "read_user": 50, "share_user": 4},
                {"stat_date": _shift(day, -1), "read_user": 48},
                {"stat_date": day, "read_user": 70, "share_user": 6},
            ],
        }
    )
    _fetch(app, day)
    figures = _stats(admin_client, task)
    assert [(d["readUser"], d["shareUser"]) for d in figures["days"]] == [(50, 4), (0, None), (20, 2)]
    assert (figures["totals"]["readUser"], figures["totals"]["shareUser"]) == (70, 6)


def test_one_call_per_publish_day_not_per_article(app, admin_client, agent_headers, fake):
    """Three live articles, two published on the same day, one outside WECHAT_STATS_DAYS (7): two calls."""
    same = [live_task(app, admin_client, agent_headers, days_ago=2, fake=fake) for _ in range(2)]
    later = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    live_task(app, admin_client, agent_headers, days_ago=9, fake=fake)  # its week is over: not asked
    day = yesterday(app)
    with db.connection_context():
        [result] = fetching.daily_step(app.extensions["settings"])
    assert (result["error"], result["calls"]) == (None, 2), result
    asked = sorted(c["json"]["begin_date"] for c in fake.requests_to("getarticletotaldetail"))
    assert asked == [_shift(day, -1), day]
    assert all(c["json"]["begin_date"] == c["json"]["end_date"] for c in fake.requests_to("getarticletotaldetail"))
    for task, days in ((same[0], 2), (same[1], 2), (later, 1)):
        assert len(_stats(admin_client, task)["days"]) == days


def test_a_day_answered_is_delay_is_asked_again_at_the_next_pass(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    settings = app.extensions["settings"]
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 10}
    fake.delay_days.add(day)  # the platform's figures of yesterday are not final yet
    with db.connection_context():
        assert [r["stored"] for r in fetching.daily_step(settings)] == [1]
        assert StatsFetch.get(StatsFetch.day == day).status == "delayed"
    assert [d["readUser"] for d in _stats(admin_client, task)["days"]] == [10]  # shown meanwhile
    fake.day_figures[(task["live"]["articleId"], day)] = {"read_user": 14}
    fake.delay_days.clear()
    with db.connection_context():
        assert [r["stored"] for r in fetching.daily_step(settings)] == [1]  # asked again, now final
        assert StatsFetch.get(StatsFetch.day == day).status == "done"
        assert fetching.daily_step(settings) == []  # and not again
    assert len(fake.requests_to("getarticletotaldetail")) == 2
    assert [d["readUser"] for d in _stats(admin_client, task)["days"]] == [14]


@pytest.mark.parametrize(
    "body",
    [
        '{"list": [{"msgid": "x_1", "detail_list": 5}]}',
        '{"list": ["an item"]}',
        '{"is_delay": false}',  # no list at all: was read as an empty one, the day done with nothing
        '{"list": null}',
    ],
)
def test_an_answer_that_cannot_be_read_is_one_line_and_not_asked_again(
    app, admin_client, agent_headers, fake, caplog, body
):
    """issue 52 item 7: no traceback, not "could not be stored", and the job does not repeat the question."""
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = yesterday(app)
    fake.fail_next("getarticletotaldetail", status=200, body=body, content_type="application/json")
    caplog.set_level(logging.INFO, logger="services.stats")
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day])
    assert result.exit_code == 1
    [said] = [line for line in result.output.splitlines() if line.startswith(f"silicon-rise {day}")]
    assert said.startswith(f"silicon-rise {day}: not fetched: the platform's answer could not be read: "), said
    assert "Traceback" not in result.output and "could not be stored" not in result.output
    mine = [r for r in caplog.records if r.name.startswith("services.stats")]
    assert len(mine) == 1 and mine[0].exc_info is None and "could not be stored" not in mine[0].getMessage()
    assert "could not be read" in mine[0].getMessage()
    with db.connection_context():
        assert fetching.daily_step(app.extensions["settings"]) == []  # not retried as a store failure would be
        assert StatsFetch.get(StatsFetch.day == day).status == "failed"
    assert len(fake.requests_to("getarticletotaldetail")) == 1


def test_the_demos_live_article_has_its_link_and_a_week_of_figures(app, admin_client, fake):
    """`python app.py --demo` (services/demo.py): the sample article went live a week ago here and on the
    platform, so its week of figures comes from the answers for its publish day (issue 53, done when)."""
    from services.auth import save_admin
    from services.demo import seed, seed_live

    settings = app.extensions["settings"]
    with app.app_context(), db.connection_context():
        save_admin("demo", "demo-password-123", "review,feedback")
        seed(settings, "demo")
        task = seed_live(settings, "demo", fake.set_publish_day)
    assert task is not None and task["live"]["articleUrl"].startswith("https://mp.weixin.qq.com/s?__biz=")
    figures = _stats(admin_client, task)
    assert len(figures["days"]) == 7 and all(day["readUser"] > 0 for day in figures["days"])
    [publish_day] = {c["json"]["begin_date"] for c in fake.requests_to("getarticletotaldetail")}
    assert publish_day == figures["days"][0]["date"]


def test_a_delayed_day_is_asked_again_after_midnight_even_past_the_articles_window(
    app, admin_client, agent_headers, fake
):
    """The day before yesterday was answered is_delay, and midnight came: yesterday's fetch no longer covers
    the article (WECHAT_STATS_DAYS=1), so the old service left its figure as it was, never final."""
    from dataclasses import replace

    settings = replace(app.extensions["settings"], stats_days=1)
    task = live_task(app, admin_client, agent_headers, days_ago=2, fake=fake)
    before = _shift(yesterday(app), -1)
    fake.day_figures[(task["live"]["articleId"], before)] = {"read_user": 10}
    fake.delay_days.add(before)
    with db.connection_context():
        assert fetching.fetch_day("silicon-rise", before, settings)["stored"] == 1
        assert StatsFetch.get(StatsFetch.day == before).status == "delayed"
    fake.day_figures[(task["live"]["articleId"], before)] = {"read_user": 14}
    fake.delay_days.clear()
    with db.connection_context():
        assert [(r["day"], r["error"]) for r in fetching.daily_step(settings)] == [(before, None)]
        assert StatsFetch.get(StatsFetch.day == before).status == "done"
    assert [d["readUser"] for d in _stats(admin_client, task)["days"]] == [14]
