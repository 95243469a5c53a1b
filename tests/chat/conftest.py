"""Deciding from the team's chat (docs/api.md §22): the service with its card worker, the fake Feishu and
WeCom apps (fakeplatform/chatapps.py), whose clicks reach it over real HTTP."""
import pytest

from fakeplatform.chatapps import FakeChatApps
from fakeplatform.freepublish import encoding_aes_key
from tests.helpers.app import built_app
from tests.helpers.publishing import platform_settings
from tests.helpers.review import live_server

FEISHU_TOKEN, FEISHU_KEY, CHAT_ID = "feishu-verification-token", "feishu-encrypt-key", "oc_team_group"
WECOM_TOKEN, WECOM_KEY = "wecom-callback-token", encoding_aes_key()


@pytest.fixture
def chat_apps():
    apps = FakeChatApps()
    apps.start()
    yield apps
    apps.stop()


def chat_settings(apps, **extra):
    return {"FEISHU_APP_ID": apps.app_id, "FEISHU_APP_SECRET": apps.app_secret,
            "FEISHU_VERIFICATION_TOKEN": FEISHU_TOKEN, "FEISHU_ENCRYPT_KEY": FEISHU_KEY, "FEISHU_CHAT_ID": CHAT_ID,
            "FEISHU_API_BASE": apps.base_url, "WECOM_CORP_ID": apps.corp_id, "WECOM_AGENT_ID": str(apps.agent_id),
            "WECOM_SECRET": apps.corp_secret, "WECOM_TOKEN": WECOM_TOKEN, "WECOM_AES_KEY": WECOM_KEY,
            "WECOM_TO_USERS": "li|wang", "WECOM_API_BASE": apps.base_url, **extra}


@pytest.fixture
def app(make_app, fake, chat_apps):
    with built_app(make_app, **platform_settings(fake), **chat_settings(chat_apps), WEBHOOK_SENDER_ENABLED=True,
                   REVIEW_DEFAULT_LANGUAGE="en", REVIEW_PUBLIC_URL="https://review.example") as application:
        yield application


@pytest.fixture
def served_url(app):
    with live_server(app) as base:
        yield base
