"""Deciding from the team's chat (docs/api.md §22): the service with its card worker, the fake Feishu and
WeCom apps (fakeplatform/chatapps.py), whose clicks reach it over real HTTP."""

import pytest

from tests.helpers.app import built_app
from tests.helpers.chat import chat_settings
from tests.helpers.publishing import platform_settings
from tests.helpers.review import live_server


@pytest.fixture
def app(make_app, fake, chat_apps):
    with built_app(
        make_app,
        **platform_settings(fake),
        **chat_settings(chat_apps),
        WEBHOOK_SENDER_ENABLED=True,
        TEAM_MESSAGES_ENABLED=True,
        CHAT_CARDS_ENABLED=True,
        REVIEW_DEFAULT_LANGUAGE="en",
        REVIEW_PUBLIC_URL="https://review.example",
    ) as application:
        yield application


@pytest.fixture
def served_url(app):
    with live_server(app) as base:
        yield base
