"""Editions (docs/api.md §21): the service with its workers, pointed at the fake platform, whose
MASSSENDJOBFINISH pushes reach it over real HTTP."""

import pytest

from tests.helpers.app import built_app
from tests.helpers.live_processes import process_settings
from tests.helpers.publishing import ACCOUNTS, LIVE_AES_KEY, LIVE_TOKEN, platform_settings
from tests.helpers.review import live_server


@pytest.fixture
def edition_settings(fake, request):
    """A test may add settings: @pytest.mark.parametrize("edition_settings", [{...}], indirect=True)."""
    defaults = {
        "WECHAT_LIVE_WORKER_ENABLED": True,
        "WECHAT_EDITIONS_ENABLED": True,
        "WECHAT_PUBLISH_POLL_DELAYS": "0.3,0.6,1.2,2.4",
        "WECHAT_SILICON_RISE_TOKEN": LIVE_TOKEN,
        "WECHAT_SILICON_RISE_AES_KEY": LIVE_AES_KEY,
        "NOTIFY_FEISHU_WEBHOOK_URL": "https://open.feishu.cn/open-apis/bot/v2/hook/x",
    }
    return platform_settings(fake, **{**defaults, **getattr(request, "param", {})})


@pytest.fixture
def app(make_app, edition_settings):
    with built_app(make_app, **edition_settings) as application:
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
