"""Going live and what readers did on the task page (docs/api.md §18, §19), in Chromium: publish to
readers, schedule in the viewer's zone and cancel, the article's link, the reads chart, in both
languages at phone width, with axe-core and no sideways scrolling."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from models import db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import (
    DEMO_ADMIN,
    OUTPUT,
    axe_violations,
    screenshot,
    serve_with_workers,
    sideways_overflow,
    sign_in_as,
)
from tests.helpers.publishing import went_live_days_ago
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset

AGENT = {"x-review-agent-token": AGENT_TOKEN}


@pytest.fixture
def live_server(make_app):
    """The app with its live worker, the fake platform pushing publish events to it."""
    with serve_with_workers(make_app) as server:
        yield server


def published(live_server, topic):
    app = live_server.app
    client = app.test_client()
    client.post("/api/auth/login", data={"username": DEMO_ADMIN, "password": ADMIN_PASSWORD})
    cover = make_asset(app, 900, 500)
    task = create_task(client, AGENT, article_payload([cover["url"]], topic=topic))
    answer = client.post(decision_url(task), json=approve_article(task, cover, action="approve_and_publish"))
    assert answer.get_json()["status"] == "published", answer.get_json()
    return task, client


WORDS = {
    "zh-CN": {
        "fetch_failed": "{day} 的数据获取失败：该公众号今天的接口调用次数已用完（45009）；稍后会再试",
        "now": "立即发表给读者",
        "live": "已发表",
        "link": "打开文章",
        "reads": "读者数据",
        "schedule": "定时发表",
        "scheduled": "已定时发表",
        "cancel": "取消定时",
        "canceled": "定时已取消",
    },
    "en": {
        "fetch_failed": "Fetching the figures of {day} failed: the account used up today's API quota (45009); "
        "tried again later",
        "now": "Publish to readers now",
        "live": "Live",
        "link": "Open the article",
        "reads": "What readers did",
        "schedule": "Schedule",
        "scheduled": "Scheduled for readers",
        "cancel": "Cancel the schedule",
        "canceled": "Schedule canceled",
    },
}


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_publish_to_readers_then_the_reads_chart_on_a_phone(open_page, live_server, console, language):
    words = WORDS[language]
    task, client = published(live_server, f"上线 {language}")
    page = open_page(language, "phone")
    sign_in_as(page, language, f"/review/{task['id']}")
    page.on("dialog", lambda dialog: dialog.accept())
    assert sideways_overflow(page) <= 0
    page.screenshot(path=str(OUTPUT / f"publish-to-readers-{language}-phone-view.png"))  # the bar as it sits
    page.locator("#live-alone > summary").click()  # publishing alone is folded under the edition
    page.get_by_role("button", name=words["now"]).click()
    badge = page.locator("#live-status")
    badge.wait_for()
    page.wait_for_function(
        f"() => document.querySelector('#live-status')?.textContent.trim() === {words['live']!r}", timeout=20_000
    )
    link = page.locator("#live-link")
    expect(link).to_have_text(words["link"])
    assert link.get_attribute("href").startswith("https://mp.weixin.qq.com/s?__biz=")
    # Three days of figures, as the daily job or the backfill command stores them (for days since it went live).
    went_live_days_ago(task["id"], 4, live_server.platform)
    runner = live_server.app.test_cli_runner()
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
    for back in (3, 2, 1):
        assert runner.invoke(args=["fetch-stats", "--date", (today - timedelta(days=back)).isoformat()]).exit_code == 0
    figures = client.get(f"/api/review/tasks/{task['id']}/stats").get_json()
    page.reload()
    chart = page.get_by_role("img", name=page.locator("#reads-title").text_content())
    assert chart.is_visible()
    described = page.locator("#reads-desc").text_content()
    for day in figures["days"]:
        assert str(day["readUser"]) in described and day["date"] in described
    assert page.get_by_role("heading", name=words["reads"]).is_visible()
    # Today's fetch failed: said in the page's language.
    from models import StatsFetch

    with db.connection_context():
        StatsFetch.create(
            account="silicon-rise",
            day=today.isoformat(),
            status="failed",
            attempts=1,
            last_error="quota",
            last_errcode=45009,
            updated_at="2099-01-01T00:00:00.000Z",
        )
    page.reload()
    assert page.locator("#reads-failure").text_content() == words["fetch_failed"].format(day=today.isoformat())
    page.locator("section.reads").screenshot(path=str(OUTPUT / f"reads-{language}-phone.png"))
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, f"going-live-{language}-phone")
    listing = open_page(language, "phone")
    sign_in_as(listing, language, "/review?live=live")  # a live task is under "Live", no longer "Draft ready"
    row = listing.locator(f'tr[data-task-id="{task["id"]}"]')
    assert str(figures["totals"]["readUser"]) in row.text_content()
    assert sideways_overflow(listing) <= 0
    screenshot(listing, f"review-list-{language}-phone")
    console.assert_clean()


def test_a_schedule_is_read_in_the_viewers_zone_and_can_be_cancelled(open_page, live_server, console):
    task, client = published(live_server, "定时上线")
    page = open_page("en", "wide", timezone="America/New_York")
    sign_in_as(page, "en", f"/review/{task['id']}")
    tomorrow = (datetime.now(ZoneInfo("America/New_York")) + timedelta(days=1)).replace(
        hour=8, minute=30, second=0, microsecond=0
    )
    page.locator("#live-alone > summary").click()  # publishing alone is folded under the edition
    page.get_by_label("Or at a time (your time zone)").fill(tomorrow.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name=WORDS["en"]["schedule"], exact=True).click()
    page.wait_for_function(
        f"() => document.querySelector('#live-status')?.textContent.trim() === {WORDS['en']['scheduled']!r}"
    )
    live = client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    assert datetime.fromisoformat(live["at"].replace("Z", "+00:00")) == tomorrow
    page.wait_for_load_state("load")  # the reloaded page's script listens before the click (a loaded machine)
    page.get_by_role("button", name=WORDS["en"]["cancel"]).click()
    page.wait_for_function(
        f"() => document.querySelector('#live-status')?.textContent.trim() === {WORDS['en']['canceled']!r}"
    )
    assert live_server.platform.requests_to("freepublish/submit") == []
    console.assert_clean()


def test_a_failure_says_why_in_chinese_on_a_phone(open_page, live_server, console):
    live_server.platform.finish_next_publish_with(4)
    task, client = published(live_server, "审核未过")
    page = open_page("zh-CN", "phone")
    sign_in_as(page, "zh-CN", f"/review/{task['id']}")
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator("#live-alone > summary").click()  # publishing alone is folded under the edition
    page.get_by_role("button", name=WORDS["zh-CN"]["now"]).click()
    page.locator("#live-reason").wait_for(timeout=20_000)
    assert page.locator("#live-status").text_content().strip() == "发表失败"
    assert page.locator("#live-reason").text_content().strip() == "未通过平台审核（publish_status 4）"
    assert client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]["failReason"] == (
        "refused by the platform's review (publish_status 4)"
    )
    # Asking again is one tap away beside the reason, folded so the bar stays short (under 40% of the screen).
    assert page.locator(".decision-panel").bounding_box()["height"] < 0.4 * page.viewport_size["height"]
    page.locator("#live-alone > summary").click()
    expect(page.get_by_role("button", name=WORDS["zh-CN"]["now"])).to_be_visible()
    assert sideways_overflow(page) <= 0
    assert axe_violations(page) == []
    screenshot(page, "going-live-failed-zh-CN-phone")
    console.assert_clean()


def test_the_delete_question_says_what_stays_on_wechat_as_it_stands(open_page, live_server, console):
    from tests.helpers.publishing import go_live_url, wait_for_live

    task, client = published(live_server, "删除时")
    page = open_page("en", "wide")
    sign_in_as(page, "en", f"/review/{task['id']}")
    questions = []
    page.on("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))

    def question():
        page.reload()
        page.get_by_role("button", name="Delete task…").click()
        return questions[-1]

    at = (datetime.now(ZoneInfo("UTC")) + timedelta(days=1)).isoformat()
    assert client.post(go_live_url(task), json={"at": at}).status_code == 202
    scheduled = question()
    assert "stays on WeChat" not in scheduled and "This cannot be undone." in scheduled
    assert client.delete(go_live_url(task)).status_code == 200
    assert client.post(go_live_url(task), json={}).status_code == 202
    assert wait_for_live(client, task, seconds=20)["live"]["status"] == "live"
    assert "the article already published to readers stays on WeChat" in question()
    assert client.get(f"/api/review/tasks/{task['id']}").status_code == 200  # dismissed: nothing deleted
    console.assert_clean()
