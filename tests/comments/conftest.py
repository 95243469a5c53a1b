"""Readers' comments (docs/api.md §23): the service with its workers and webhook sender, pointed at the fake
platform (MASSSENDJOBFINISH pushed to it over real HTTP for editions) and a webhook receiver."""

import pytest

from tests.helpers.app import built_app
from tests.helpers.live_processes import process_settings
from tests.helpers.publishing import ACCOUNTS, LIVE_AES_KEY, LIVE_TOKEN, STATS_SECRET, platform_settings
from tests.helpers.review import live_server


@pytest.fixture
def app(make_app, fake, receiver):
    fake.publish_seconds = 0.05
    with built_app(
        make_app,
        **platform_settings(fake),
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.1,0.2,0.4,0.8,1.6",
        WECHAT_SILICON_RISE_TOKEN=LIVE_TOKEN,
        WECHAT_SILICON_RISE_AES_KEY=LIVE_AES_KEY,
        WECHAT_COMMENTS_ENABLED=False,  # fetched by the command: a test says when
        WEBHOOK_SENDER_ENABLED=True,
        TEAM_MESSAGES_ENABLED=True,
        CHAT_CARDS_ENABLED=True,
        REVIEW_AGENT_WEBHOOK_URL=receiver.url,
        REVIEW_AGENT_WEBHOOK_SECRET=STATS_SECRET,
        REVIEW_AGENT_WEBHOOK_EVENTS="review_task.comments",
        REVIEW_WEBHOOK_RETRY_DELAYS="0.2",
    ) as application:
        yield application


@pytest.fixture
def served_url(app, fake):
    """The app on a real HTTP server, named to the fake platform as silicon-rise's server URL."""
    with live_server(app) as base:
        fake.send_events_to(
            ACCOUNTS["silicon-rise"][0], f"{base}/wechat/silicon-rise/events", LIVE_TOKEN, LIVE_AES_KEY, "aes"
        )
        yield base


@pytest.fixture
def settings(database_url, fake):
    """The settings of `python app.py` processes (tests/helpers/live_processes.py)."""
    return process_settings(database_url, fake)
