"""What readers did (docs/api.md §19): the service with its live worker and webhook sender, pointed at the
fake platform (events withheld: going live is learnt by polling) and a webhook receiver."""

import pytest

from tests.helpers.app import built_app
from tests.helpers.publishing import STATS_SECRET, platform_settings


@pytest.fixture
def team_zone():
    """REVIEW_TIME_ZONE of the app (a test parametrizes it to be far from the platform's Beijing)."""
    return "Asia/Shanghai"


@pytest.fixture
def app(make_app, fake, receiver, team_zone):
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    with built_app(
        make_app,
        **platform_settings(fake),
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_STATS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.1,0.2,0.4,0.8,1.6",  # a backoff, as the default: a late fake is asked again
        WECHAT_STATS_HOUR=0,
        REVIEW_TIME_ZONE=team_zone,
        WEBHOOK_SENDER_ENABLED=True,
        TEAM_MESSAGES_ENABLED=True,
        CHAT_CARDS_ENABLED=True,
        REVIEW_AGENT_WEBHOOK_URL=receiver.url,
        REVIEW_AGENT_WEBHOOK_SECRET=STATS_SECRET,
        REVIEW_AGENT_WEBHOOK_EVENTS="review_task.stats",
        REVIEW_WEBHOOK_RETRY_DELAYS="0.2",
    ) as application:
        yield application
