"""The team's channels in the metrics (docs/api.md §16): `review_team_outbox_pending{channel}` and
`review_team_notifications_total{channel,outcome}` show a mail server that is down; the counter is kept
in the store, so deleting the messages never lowers it. A plain relay met with STARTTLS names the fix."""

import logging

import pytest

from models import OutboxMessage, db
from tests.helpers import team
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.metrics import TOKEN, scrape, value
from tests.helpers.review import article_payload, create_task
from tests.helpers.served import free_port
from tests.helpers.team import robot_settings, send_pass, smtp_server, team_rows

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}


def mail_settings(port, **extra):
    return team.mail_settings(port, METRICS_TOKEN=TOKEN, **extra)


def email_figures(app):
    values = scrape(app.test_client())
    return (
        value(values, "review_team_outbox_pending", channel="email"),
        *(
            value(values, "review_team_notifications_total", channel="email", outcome=outcome)
            for outcome in ("sent", "failed", "given_up")
        ),
    )


def test_a_mail_server_that_is_down_shows_in_the_metrics_and_the_count_never_goes_down(make_app):
    down = free_port()  # nothing listens there
    with built_app(make_app, **mail_settings(down, REVIEW_WEBHOOK_RETRY_DELAYS="0")) as app:
        assert email_figures(app) == (0, 0, 0, 0)  # present at 0 from the start
        create_task(app.test_client(), AGENT, article_payload())
        assert email_figures(app) == (1, 0, 0, 0)  # pending, sent, failed, given up
        assert send_pass(app) == {"email": 0}
        assert email_figures(app) == (1, 0, 1, 0)  # failed, to be retried
        assert send_pass(app) == {"email": 0}
        assert email_figures(app) == (0, 0, 1, 1)  # given up after the schedule
        assert "unreachable" in team_rows("email")[0].last_error
    with smtp_server() as (mailbox, port), built_app(make_app, **mail_settings(port)) as app:
        create_task(app.test_client(), AGENT, article_payload(topic="second"))
        assert send_pass(app) == {"email": 1} and len(mailbox.messages) == 1
        assert email_figures(app) == (0, 1, 1, 1)
        with db.connection_context():
            OutboxMessage.delete().execute()
        assert email_figures(app) == (0, 1, 1, 1)  # counted at the event, not from the rows


def test_a_digest_counts_each_message_it_carries(make_app, robots):
    with built_app(make_app, **robot_settings(robots, METRICS_TOKEN=TOKEN)) as app:
        for topic in ("one", "two", "three"):
            create_task(app.test_client(), AGENT, article_payload(topic=topic))
        values = scrape(app.test_client())
        assert [value(values, "review_team_outbox_pending", channel=c) for c in ("wecom", "feishu", "dingtalk")] == [
            3,
            3,
            3,
        ]
        assert send_pass(app, ["wecom"]) == {"wecom": 3}
        assert len(robots["wecom"].texts) == 1  # one digest
        values = scrape(app.test_client())
    assert value(values, "review_team_notifications_total", channel="wecom", outcome="sent") == 3
    assert value(values, "review_team_outbox_pending", channel="wecom") == 0
    assert value(values, "review_team_outbox_pending", channel="feishu") == 3
    assert value(values, "review_team_outbox_pending", channel="email") == 0  # not configured: no series


def test_starttls_against_a_plain_relay_names_smtp_starttls_false(make_app, caplog):
    caplog.set_level(logging.WARNING)
    with smtp_server() as (mailbox, port), built_app(make_app, **mail_settings(port, SMTP_STARTTLS=True)) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert send_pass(app) == {"email": 0}
        [row] = team_rows("email")
    assert mailbox.messages == [] and row.status == "pending"
    assert "SMTP_STARTTLS=false" in row.last_error, row.last_error
    assert any("SMTP_STARTTLS=false" in record.getMessage() for record in caplog.records)
