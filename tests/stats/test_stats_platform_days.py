"""The platform's days are Beijing's, whatever REVIEW_TIME_ZONE the pages use (docs/api.md §19): the publish
day datacube is asked for, its stat_date and its "yesterday", the last day it gives figures of. Against the
fake platform over HTTP, with the team's zone far from Beijing."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from fakeplatform.freepublish import beijing_day
from models import ReviewTask, StatsFetch, TaskLive, db
from rules.ids import iso
from services.stats import fetching
from tests.helpers.publishing import live_task, yesterday

pytestmark = pytest.mark.both_stores
BEIJING = ZoneInfo("Asia/Shanghai")


def _went_live_at(task, moment):
    with db.connection_context():
        task_pk = ReviewTask.get(ReviewTask.task_id == task["id"]).id
        TaskLive.update(live_at=iso(moment)).where(TaskLive.task == task_pk).execute()


@pytest.mark.parametrize("team_zone", ["America/Los_Angeles"])
@pytest.mark.parametrize("hour, minute", [(0, 10), (23, 50)])
def test_an_article_published_near_beijings_midnight_is_asked_for_by_beijings_day(
    app, admin_client, agent_headers, fake, team_zone, hour, minute
):
    """Published two days ago just after (or just before) midnight in Beijing: in Los Angeles that is the day
    before (or the same day's morning), but the platform files it under Beijing's day, so that is the day
    asked for, and its figures from that day on are the article's."""
    task = live_task(app, admin_client, agent_headers, days_ago=2, fake=fake)
    published = beijing_day(-2)  # the fake's publish day of the article
    moment = datetime.fromisoformat(published).replace(hour=hour, minute=minute, tzinfo=BEIJING)
    _went_live_at(task, moment)
    if hour == 0:  # the team's day differs from the platform's
        assert moment.astimezone(ZoneInfo(team_zone)).date().isoformat() < published
    day = yesterday(app)
    assert day == beijing_day(-1)
    article = task["live"]["articleId"]
    fake.day_figures[(article, published)] = {"read_user": 40}
    fake.day_figures[(article, day)] = {"read_user": 7}
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day])
    assert result.exit_code == 0, result.output
    assert [c["json"] for c in fake.requests_to("getarticletotaldetail")] == [
        {"begin_date": published, "end_date": published}
    ]
    days = admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["days"]
    assert [(d["date"], d["readUser"]) for d in days] == [(published, 40), (day, 7)]


@pytest.mark.parametrize("asked", ["submitted_at", "at"])  # `at`: an edition's send (its row written once sent)
def test_an_article_a_poll_found_live_after_midnight_is_asked_for_by_its_publish_day(
    app, admin_client, agent_headers, fake, asked
):
    """Submitted at 23:30 in Beijing, published at 23:40, found live by a poll at 00:20 (no event came):
    datacube files it under the day before the service learnt of it. The old fetch asked only for that later
    day, and the article's figures were never stored."""
    task = live_task(app, admin_client, agent_headers, days_ago=3, fake=fake)
    published, learnt = beijing_day(-3), beijing_day(-2)  # the fake files it under `published`
    at = datetime.fromisoformat(published).replace(tzinfo=BEIJING)
    with db.connection_context():
        learnt_at = iso(datetime.fromisoformat(learnt).replace(hour=0, minute=20, tzinfo=BEIJING))
        TaskLive.update(
            {"submitted_at": learnt_at, "at": learnt_at, asked: iso(at.replace(hour=23, minute=30))},
            live_at=learnt_at,
        ).where(TaskLive.task == ReviewTask.get(ReviewTask.task_id == task["id"]).id).execute()
    day = yesterday(app)
    article = task["live"]["articleId"]
    fake.day_figures[(article, published)] = {"read_user": 12}
    fake.day_figures[(article, learnt)] = {"read_user": 30}
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day])
    assert result.exit_code == 0, result.output
    asked = [c["json"] for c in fake.requests_to("getarticletotaldetail")]
    assert asked == [{"begin_date": d, "end_date": d} for d in (published, learnt)], asked
    days = admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()["days"]
    assert [(d["date"], d["readUser"]) for d in days][:2] == [(published, 12), (learnt, 30)], days


@pytest.mark.parametrize(
    "zone, local, expected",
    [
        # East of Beijing: at 00:30 in Kiritimati its yesterday (the 5th) is still Beijing's today (18:30 there).
        ("Pacific/Kiritimati", datetime(2026, 11, 6, 0, 30), "2026-11-04"),
        ("Pacific/Kiritimati", datetime(2026, 11, 6, 9, 0), "2026-11-05"),
        # West of it: the team's yesterday is always over in Beijing too.
        ("America/Los_Angeles", datetime(2026, 11, 6, 0, 30), "2026-11-05"),
        ("America/Los_Angeles", datetime(2026, 11, 6, 23, 30), "2026-11-05"),
    ],
)
def test_the_day_due_is_never_after_the_platforms_yesterday(app, zone, local, expected):
    """The job's day: yesterday in the team's zone from WECHAT_STATS_HOUR there, at most the platform's
    yesterday (asking for Beijing's today would answer 61501)."""
    settings = app.extensions["settings"].__class__.from_config({**app.config, "REVIEW_TIME_ZONE": zone})
    now = local.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    assert fetching.due_day(settings, now) == expected
    assert fetching.due_day(settings, now) <= fetching.platform_yesterday(now)


@pytest.mark.parametrize("team_zone", ["Asia/Shanghai", "Pacific/Kiritimati"])
@pytest.mark.parametrize("offset", [0, 1, 400])
def test_the_command_refuses_a_day_the_platform_has_no_figures_of_yet(
    app, admin_client, agent_headers, fake, team_zone, offset
):
    """Beijing's today or later: refused before any call (the platform would answer 61501), nothing recorded."""
    live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    day = (datetime.now(BEIJING).date() + timedelta(days=offset)).isoformat()
    refused = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day])
    assert refused.exit_code == 2, refused.output
    assert f"{day} has no figures yet: the platform gives them up to its yesterday, {beijing_day(-1)}" in (
        refused.output
    )
    assert fake.requests_to("getarticletotaldetail") == []
    with db.connection_context():
        assert StatsFetch.select().count() == 0
    # Its yesterday is taken.
    assert app.test_cli_runner().invoke(args=["fetch-stats", "--date", beijing_day(-1)]).exit_code == 0
    assert len(fake.requests_to("getarticletotaldetail")) == 1
