"""The team hears when an article goes live or fails to (docs/api.md §18), naming the account as people
know it (WECHAT_ACCOUNTS), through the robots as every other team message."""

import pytest

from fakeplatform.robots import FakeRobot
from tests.helpers.app import built_app
from tests.helpers.publishing import go_live_url, platform_settings, published_article, wait_for_live
from tests.helpers.team import send_pass


@pytest.fixture
def robot():
    found = FakeRobot("wecom")
    yield found
    found.stop()


@pytest.mark.parametrize(("outcome", "words"), [(0, "已发表"), (4, "发表失败")])
def test_live_and_live_failed_reach_the_robot_with_the_accounts_name(make_app, fake, robot, outcome, words):
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    fake.finish_next_publish_with(outcome)
    settings = {
        **platform_settings(fake),
        "WECHAT_ACCOUNTS": "silicon-rise=硅基崛起,carbon-fitness=碳基健身",
        "NOTIFY_WECOM_WEBHOOK_URL": robot.url,
        "NOTIFY_EVENTS": "live,live_failed",
        "REVIEW_DEFAULT_LANGUAGE": "zh-CN",
        "WECHAT_LIVE_WORKER_ENABLED": True,
        "WECHAT_EDITIONS_ENABLED": True,
        "WECHAT_PUBLISH_POLL_DELAYS": "0.1",
    }
    with built_app(make_app, **settings) as app:
        from tests.helpers.app import AGENT_TOKEN, signed_in_admin

        admin = signed_in_admin(app)
        task = published_article(app, admin, {"x-review-agent-token": AGENT_TOKEN})
        admin.post(go_live_url(task), json={})
        live = wait_for_live(admin, task)["live"]
        assert send_pass(app, ["wecom"]) == {"wecom": 1}  # the creation was not chosen: only this one
    [text] = robot.texts
    assert "硅基崛起" in text and "silicon-rise" not in text and words in text
    if outcome == 0:
        assert f"[{live['articleUrl']}]({live['articleUrl']})" in text  # a link the group can open
    else:
        assert "publish＿status 4" in text  # the reason, inert like every text of the platform's
