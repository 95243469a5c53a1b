"""Going live (docs/api.md §18): the service with its live worker, pointed at the fake platform, whose
event pushes reach it over real HTTP (tests/helpers/review.py live_server)."""

import pytest

from tests.helpers.app import built_app
from tests.helpers.live_processes import process_settings
from tests.helpers.publishing import ACCOUNTS, LIVE_AES_KEY, LIVE_TOKEN, platform_settings
from tests.helpers.review import live_server

TOKEN, AES_KEY = LIVE_TOKEN, LIVE_AES_KEY


@pytest.fixture
def live_settings(fake):
    return platform_settings(
        fake,
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.3",
        WECHAT_SILICON_RISE_TOKEN=TOKEN,
        WECHAT_SILICON_RISE_AES_KEY=AES_KEY,
    )


@pytest.fixture
def app(make_app, live_settings):
    with built_app(make_app, **live_settings) as application:
        yield application


@pytest.fixture
def served_url(app, fake):
    """The app on a real HTTP server, named to the fake platform as silicon-rise's server URL."""
    with live_server(app) as base:
        fake.send_events_to(ACCOUNTS["silicon-rise"][0], f"{base}/wechat/silicon-rise/events", TOKEN, AES_KEY, "aes")
        yield base


@pytest.fixture
def settings(database_url, fake):
    """The settings of `python app.py` processes going live (tests/helpers/live_processes.py)."""
    return process_settings(database_url, fake)
