"""One term per meaning across pages, robots and e-mail (docs/api.md §15): the team's messages take their
words from the pages' catalogue, so each feedback type and each state a message tells of is the word
the page shows, in both languages; no Chinese is written in the team's Python."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from flask_babel import force_locale

from models import db
from rules.labels import EVENT_LABELS, LIVE_LABELS, LOCALES
from services.team import outbox
from tests.helpers.app import AGENT_TOKEN, built_app, signed_in_admin
from tests.helpers.review import article_payload, create_task
from tests.helpers.team import robot_settings, send_pass

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
CLIENT = {"x-feedback-client-token": "client-web-token"}
TYPES = ("bug", "suggestion", "content", "account", "other")
LANGUAGES = ("zh-CN", "en")
IN_BRACKETS = re.compile(r"[（(]([^（()）]+)[）)]$")  # the word in brackets that ends a line


def reader(app, language):
    """A signed-in admin reading the pages in `language`."""
    admin = signed_in_admin(app)
    admin.set_cookie("review_lang", language)
    return admin


def page_of(admin, path):
    page = admin.get(path)
    assert page.status_code == 200, path
    return page.get_data(as_text=True)


def what_line(robot):
    """The latest message's second line (Feishu's text: head, what happened, link)."""
    return robot.texts[-1].split("\n")[1]


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_feedback_type_is_the_pages_word(make_app, robots, language):
    settings = robot_settings(
        robots, REVIEW_DEFAULT_LANGUAGE=language, FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE=""
    )
    robot_words, page_words = {}, {}
    with built_app(make_app, **settings) as app:
        admin = reader(app, language)
        for kind in TYPES:
            created = app.test_client().post(
                "/api/feedbacks",
                headers=CLIENT,
                json={
                    "appName": "App",
                    "appVersion": "1.0",
                    "platform": "web",
                    "type": kind,
                    "title": f"t-{kind}",
                    "content": "x",
                },
            )
            assert created.status_code == 201, created.get_json()
            assert send_pass(app, ["feishu"]) == {"feishu": 1}
            robot_words[kind] = IN_BRACKETS.search(what_line(robots["feishu"])).group(1)
            html = page_of(admin, f"/feedback/{created.get_json()['id']}")
            page_words[kind] = re.search(r'<span class="badge">([^<]+)</span>', html).group(1)
    assert robot_words == page_words
    if language == "zh-CN":
        assert robot_words["bug"] == "故障" and robot_words["account"] == "账号"


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_state_a_message_tells_is_the_pages_word(make_app, robots, language):
    settings = robot_settings(robots, REVIEW_DEFAULT_LANGUAGE=language)
    with built_app(make_app, **settings) as app:
        task = create_task(app.test_client(), AGENT, article_payload())
        send_pass(app, ["feishu"])
        created = what_line(robots["feishu"])
        task_page = page_of(reader(app, language), f"/review/{task['id']}")
        status_badge = re.search(r'id="task-status">([^<]+)<', task_page)[1]
        said = {}
        team = app.extensions["settings"].team
        record = SimpleNamespace(task_id=task["id"], public_account="silicon-rise", topic="t")
        for name, write in [
            ("reworked", lambda: outbox.task_awaiting_review(team, record, "reworked")),
            (
                "publish_failed",
                lambda: outbox.publish_ended(
                    team, record, SimpleNamespace(status="failed", last_error="e", job_id="j")
                ),
            ),
            (
                "live",
                lambda: outbox.live_ended(
                    team,
                    record,
                    SimpleNamespace(
                        status="live",
                        article_url="https://mp.weixin.qq.com/s/a",
                        fail_reason=None,
                        fail_code=None,
                        fail_detail=None,
                    ),
                ),
            ),
            (
                "live_failed",
                lambda: outbox.live_ended(
                    team,
                    record,
                    SimpleNamespace(
                        status="failed", article_url=None, fail_reason="e", fail_code=None, fail_detail="e"
                    ),
                ),
            ),
        ]:
            with db.connection_context(), db.atomic():
                write()
            assert send_pass(app, ["feishu"]) == {"feishu": 1}
            said[name] = what_line(robots["feishu"])
        with app.app_context(), force_locale(LOCALES[language]):
            pages = {
                "publish_failed": str(EVENT_LABELS["publish_failed"]),
                "live": str(LIVE_LABELS["live"]),
                "live_failed": str(LIVE_LABELS["failed"]),
            }
    assert IN_BRACKETS.search(created).group(1) == status_badge  # pending review, as the task page says
    assert IN_BRACKETS.search(said["reworked"]).group(1) == status_badge
    assert said["live"] == pages["live"]
    for name in ("publish_failed", "live_failed"):
        assert said[name].startswith(pages[name]) and said[name].endswith("e"), (said[name], pages[name])


def test_no_chinese_in_the_teams_python():
    """The words live in the catalogue (translations/), not in the code."""
    folder = Path(__file__).resolve().parents[2] / "services" / "team"
    for path in folder.glob("*.py"):
        assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", path.read_text()), path.name


def test_a_live_articles_address_is_linked_only_when_it_is_the_platforms():
    """An address stored before only the platform's were kept (or any outbox row's) cannot end the Markdown
    link and add one of its own, nor mention anyone."""
    from services.team.messages import render

    facts = {"event": "task.live", "account": "silicon-rise", "topic": "t", "path": "/review/1", "status": "live"}
    for url in ("https://mp.weixin.qq.com/s/a)[click](https://evil.example/x", "https://mp.weixin.qq.com/s/a@all"):
        message = render([{**facts, "articleUrl": url}], "en", "https://review.example", 4096)
        assert "evil" not in message.markdown and "@all" not in message.text, message.markdown
    good = render([{**facts, "articleUrl": "https://mp.weixin.qq.com/s/abc_D-1"}], "en", "https://review.example", 4096)
    assert "[https://mp.weixin.qq.com/s/abc_D-1](https://mp.weixin.qq.com/s/abc_D-1)" in good.markdown
