"""Accounts as a setting (docs/api.md §18): a third account configured by WECHAT_ACCOUNTS works end to
end, and an account not configured is refused everywhere."""

import time

import pytest

from fakeplatform import FakePlatform
from fakeplatform.freepublish import sha1_sorted
from services.settings import SettingsError
from tests.helpers.app import assert_error, built_app
from tests.helpers.publishing import go_live_url, platform_settings, wait_for_live
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, live_server, make_asset

THIRD = {
    "WECHAT_ACCOUNTS": "silicon-rise=硅基崛起,carbon-fitness=碳基健身,moon-walk=月球漫步",
    "WECHAT_MOON_WALK_APPID": "wx-moon-walk",
    "WECHAT_MOON_WALK_SECRET": "secret-moon-walk-789",
    "WECHAT_MOON_WALK_TOKEN": "moon-token",
}


@pytest.fixture
def app(make_app, fake):
    fake.add_account("wx-moon-walk", "secret-moon-walk-789")
    with built_app(
        make_app,
        **platform_settings(fake),
        **THIRD,
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.3,0.6,1.2,2.4",
    ) as application:
        yield application


def test_a_third_account_works_end_to_end(app, admin_client, agent_headers, fake):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, article_payload([cover["url"]], publicAccount="moon-walk"))
    decided = admin_client.post(decision_url(task), json=approve_article(task, cover, action="approve_and_publish"))
    assert decided.status_code == 200 and decided.get_json()["status"] == "published", decided.get_json()
    draft = decided.get_json()["publishJobs"][-1]["draftMediaId"]
    assert fake.drafts[draft]["appid"] == "wx-moon-walk"
    with live_server(app) as base:
        fake.send_events_to("wx-moon-walk", f"{base}/wechat/moon-walk/events", "moon-token")
        assert admin_client.post(go_live_url(task), json={}).status_code == 202
        live = wait_for_live(admin_client, task)["live"]
    assert live["status"] == "live", live
    assert fake.publishes[live["publishId"]]["appid"] == "wx-moon-walk"
    # The list filters by it, the page names it, the OpenAPI document lists it.
    listed = admin_client.get("/api/review/tasks?status=all&publicAccount=moon-walk").get_json()
    assert [t["id"] for t in listed] == [task["id"]]
    assert admin_client.get("/api/review/tasks?status=all&live=live").get_json()[0]["id"] == task["id"]
    # live alone lists every review status with that live status (pending_review is the default only without it)
    assert [t["id"] for t in admin_client.get("/api/review/tasks?live=live").get_json()] == [task["id"]]
    assert admin_client.get("/api/review/tasks?live=live&status=pending_review").get_json() == []
    assert admin_client.get("/api/review/tasks?status=all&live=scheduled").get_json() == []
    page = admin_client.get("/review?status=all").get_data(as_text=True)
    assert "月球漫步" in page and "碳基健身" in page
    document = admin_client.get("/api/openapi.json").get_json()
    enum = document["components"]["schemas"]["CreateTask"]["properties"]["publicAccount"]["enum"]
    assert enum == ["silicon-rise", "carbon-fitness", "moon-walk"]


def test_an_account_not_configured_is_refused_naming_the_allowed_ones(app, admin_client, agent_headers, fake):
    answer = admin_client.post(
        "/api/review/agent/tasks", headers=agent_headers, json=article_payload(publicAccount="sun-run")
    )
    error = assert_error(answer, 400, "validation_error")
    assert "silicon-rise, carbon-fitness, moon-walk" in " ".join(error["details"]["publicAccount"])
    assert_error(admin_client.get("/api/review/tasks?publicAccount=sun-run"), 400, "validation_error")
    now = str(int(time.time()))
    signed = {"signature": sha1_sorted("moon-token", now, "2"), "timestamp": now, "nonce": "2", "echostr": "e"}
    assert admin_client.get("/wechat/sun-run/events", query_string=signed).status_code == 404
    assert admin_client.get("/wechat/moon-walk/events", query_string=signed).get_data(as_text=True) == "e"


def test_the_default_is_the_spec_two_and_a_bad_setting_stops_the_start(make_app):
    with built_app(make_app) as application:
        assert application.extensions["settings"].accounts == {
            "silicon-rise": "silicon-rise",
            "carbon-fitness": "carbon-fitness",
        }
    for bad in ("Moon Walk", "a,a", ",", "-x"):
        with pytest.raises(SettingsError, match="WECHAT_ACCOUNTS"):
            make_app(WECHAT_ACCOUNTS=bad)


def test_the_fake_platform_knows_accounts_by_setting():
    from fakeplatform.__main__ import account_lines

    fake = FakePlatform()
    lines = account_lines({"WECHAT_ACCOUNTS": "silicon-rise,moon-walk=月球漫步"}, fake, "http://127.0.0.1:8000")
    assert "WECHAT_MOON_WALK_APPID=wx-moon-walk" in lines and not any("CARBON" in line for line in lines)
    assert set(fake.accounts) == {"wx-silicon-rise", "wx-moon-walk"}
    assert fake.event_targets["wx-moon-walk"]["url"] == "http://127.0.0.1:8000/wechat/moon-walk/events"
