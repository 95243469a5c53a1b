"""Why going live failed, in the reader's language (docs/api.md §18): the API's failReason stays English
for agents; the task page and the team's robots say the same reason in their own language."""

import pytest

from fakeplatform.robots import FakeRobot
from tests.helpers.app import AGENT_TOKEN, built_app, signed_in_admin
from tests.helpers.publishing import go_live_url, platform_settings, published_article, wait_for_live
from tests.helpers.team import send_pass

pytestmark = pytest.mark.both_stores


def _page_reason(admin_client, task, language):
    admin_client.set_cookie("review_lang", language)
    page = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    start = page.index('id="live-reason">') + len('id="live-reason">')
    return page[start : page.index("</p>", start)]


@pytest.mark.parametrize(
    ("fail", "english", "chinese"),
    [
        (
            {"status": 4},
            "refused by the platform&#39;s review (publish_status 4)",
            "未通过平台审核（publish_status 4）",
        ),
        ({"status": 6}, "banned by the platform (publish_status 6)", "已被平台封禁（publish_status 6）"),
        (
            {"errcode": 48001},
            "freepublish needs a verified account (platform error 48001)",
            "发表接口需要已认证的公众号（平台错误 48001）",
        ),
    ],
)
def test_the_page_says_why_in_its_language_and_the_api_in_english(
    app, admin_client, agent_headers, fake, served_url, fail, english, chinese
):
    if "status" in fail:
        fake.finish_next_publish_with(fail["status"])
        fake.publish_seconds = 0.1
    else:
        fake.fail_next("freepublish/submit", errcode=fail["errcode"], errmsg="api unauthorized")
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "failed"
    zh = _page_reason(admin_client, task, "zh-CN")
    assert chinese in zh and "platform" not in zh, zh
    assert english in _page_reason(admin_client, task, "en")
    # The API speaks English whatever the client's language.
    answer = admin_client.get(f"/api/review/tasks/{task['id']}", headers={"Accept-Language": "zh-CN"}).get_json()
    assert answer["live"]["failReason"].endswith(english.replace("&#39;", "'"))


def test_an_errcode_without_a_meaning_shows_the_platforms_own_words_everywhere(
    app, admin_client, agent_headers, fake, served_url
):
    fake.fail_next("freepublish/submit", errcode=40007, errmsg="invalid media_id")
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert "40007" in live["failReason"] and "invalid media_id" in live["failReason"]
    assert _page_reason(admin_client, task, "zh-CN") == _page_reason(admin_client, task, "en") == live["failReason"]


def test_asking_again_after_a_failure_forgets_the_old_reason(app, admin_client, agent_headers, fake, served_url):
    fake.fail_next("freepublish/submit", errcode=53503, errmsg="check failed")
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    assert wait_for_live(admin_client, task)["live"]["status"] == "failed"
    fake.publish_seconds = 0.1
    admin_client.post(go_live_url(task), json={})
    live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "live" and live["failReason"] is None
    assert 'id="live-reason"' not in admin_client.get(f"/review/{task['id']}").get_data(as_text=True)


@pytest.fixture
def robot():
    found = FakeRobot("wecom")
    yield found
    found.stop()


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("zh-CN", "平台要求在公众号后台发表这篇草稿（平台错误 53504）"),
        ("en", "published in its back office (platform error 53504)"),
    ],
)
def test_the_robot_says_why_in_the_teams_language(make_app, fake, robot, language, words):
    settings = {
        **platform_settings(fake),
        "NOTIFY_WECOM_WEBHOOK_URL": robot.url,
        "NOTIFY_EVENTS": "live_failed",
        "REVIEW_DEFAULT_LANGUAGE": language,
        "WECHAT_LIVE_WORKER_ENABLED": True,
        "WECHAT_EDITIONS_ENABLED": True,
    }
    fake.fail_next("freepublish/submit", errcode=53504, errmsg="need publish in mp")
    with built_app(make_app, **settings) as app:
        admin = signed_in_admin(app)
        task = published_article(app, admin, {"x-review-agent-token": AGENT_TOKEN})
        admin.post(go_live_url(task), json={})
        assert wait_for_live(admin, task)["live"]["status"] == "failed"
        assert send_pass(app, ["wecom"]) == {"wecom": 1}
    [text] = robot.texts
    ascii_form = {ord(c) + 0xFEE0: c for c in "()_"}  # markdown's look-alikes (services/team/messages.py)
    assert words.translate(ascii_form) in text.translate(ascii_form), text
