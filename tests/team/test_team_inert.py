"""Nobody can ping the team's chat through the service (docs/api.md §15): a feedback title, an app name or a
task topic holding a mention (Feishu's `<at user_id="all">`, WeCom's `<@userid>`, `@all`, DingTalk's `@138…`)
or an address reaches every channel (WeCom, Feishu, DingTalk, e-mail) as plain words, titles and
subjects included: what the fake robots and the mail server received mentions nobody and links only
the service's own pages."""

import pytest

from fakeplatform.robots import live_parts
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.review import article_payload, create_task
from tests.helpers.team import PUBLIC_URL, SMTP_USER, robot_settings, send_pass, smtp_server

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
CLIENT = {"x-feedback-client-token": "client-web-token"}
EVERYONE = '<at user_id="all"></at>'
HOSTILE_APP = EVERYONE + " www.app.example"  # within the 40 characters of an account shown
HOSTILE_TITLE = "@all <@all> @13800000000 请看 https://phish.example/login"  # within the 60 of a title
HOSTILE_TOPIC = '<at user_id="all">所有人</at> 见 http://evil.example/a'
# Their words, still there to read once the zero-width spaces are taken out.
READABLE = ("请看", "phish.example/login", "www.app.example", "所有人", "evil.example/a", "phish.example.com")


def plain(text):
    return text.replace("\u200b", "")


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_mentions_and_addresses_reach_every_channel_as_plain_words(make_app, robots, language):
    with smtp_server() as (mailbox, port):
        settings = robot_settings(
            robots,
            NOTIFY_EMAIL_TO="editor@example.com",
            SMTP_HOST="127.0.0.1",
            SMTP_PORT=port,
            SMTP_STARTTLS=False,
            SMTP_FROM=SMTP_USER,
            REVIEW_DEFAULT_LANGUAGE=language,
            FEEDBACK_RATE_LIMIT_PER_IP="",
            FEEDBACK_RATE_LIMIT_PER_DEVICE="",
        )
        with built_app(make_app, **settings) as app:
            client = app.test_client()
            answer = client.post(
                "/api/feedbacks",
                headers=CLIENT,
                json={
                    "appName": HOSTILE_APP,
                    "appVersion": "1.0",
                    "platform": "web",
                    "type": "bug",
                    "title": HOSTILE_TITLE,
                    "content": "x",
                },
            )
            assert answer.status_code == 201, answer.get_json()
            assert send_pass(app) == {"wecom": 1, "feishu": 1, "dingtalk": 1, "email": 1}  # one message each
            for topic in (HOSTILE_TOPIC, "phish.example.com @all"):  # two at once: a digest
                create_task(client, AGENT, article_payload(topic=topic))
            assert send_pass(app) == {"wecom": 2, "feishu": 2, "dingtalk": 2, "email": 2}
    mails = [mail for _sender, _to, mail in mailbox.messages]
    received = {kind: "\n".join(robot.texts) for kind, robot in robots.items()}
    received["email"] = "\n".join(f"{mail['Subject']}\n{mail.get_content()}" for mail in mails)
    received["dingtalk"] += "\n".join(body["markdown"]["title"] for body, _reply in robots["dingtalk"].attempts)
    for kind, text in received.items():
        mentions, links = live_parts(text)
        assert mentions == [], (kind, mentions)
        assert all(link.startswith(PUBLIC_URL) or link.startswith(f"[{PUBLIC_URL}") for link in links), (kind, links)
        for words in READABLE:
            assert words in plain(text), (kind, words, text)  # still readable
    for kind, robot in robots.items():  # as the robots themselves saw it, mention fields included
        assert robot.mentions == [] and all(PUBLIC_URL in link for link in robot.links), (kind, robot.links)
    assert "title" in str(robots["dingtalk"].attempts[0][0]["markdown"]) and "＜at" in mails[0]["Subject"]


def test_feishus_text_has_no_live_mention_tag(make_app, robots):
    """The report's case: an app name `<at user_id="all"></at>` reached Feishu's text unchanged."""
    settings = robot_settings(robots, FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE="")
    with built_app(make_app, **settings) as app:
        app.test_client().post(
            "/api/feedbacks",
            headers=CLIENT,
            json={
                "appName": EVERYONE,
                "appVersion": "1.0",
                "platform": "web",
                "type": "bug",
                "title": EVERYONE,
                "content": "x",
            },
        )
        send_pass(app, ["feishu"])
    [text] = robots["feishu"].texts
    assert "<at" not in text and robots["feishu"].mentions == []
