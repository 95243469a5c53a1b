"""Where an article stands, as the pages say it (docs/api.md §18 Pages): one badge for a live task (已发表,
not 草稿已就绪 beside it), a "Draft ready" tab that lists and counts only drafts not yet live, and
accounts by their names in every sentence."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers.app import built_app
from tests.helpers.publishing import go_live_url, published_article, wait_for_live

NAMED = "silicon-rise=硅基崛起,carbon-fitness=碳基健身"


@pytest.fixture
def app(make_app, live_settings):
    with built_app(make_app, **live_settings, WECHAT_ACCOUNTS=NAMED) as application:
        yield application


def _page(client, path, language="zh-CN"):
    client.set_cookie("review_lang", language)
    answer = client.get(path)
    assert answer.status_code == 200, path
    return answer.get_data(as_text=True)


def _text(html):
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _count(html, status):
    return int(re.search(rf'data-status-count="{status}">(\d+)<', html)[1])


def _row(html, task):
    return _text(re.search(rf'<tr data-task-id="{task["id"]}">(.*?)</tr>', html, re.S)[1])


def test_a_live_task_has_one_badge_and_the_draft_ready_tab_counts_the_rest(app, admin_client, agent_headers, fake):
    fake.publish_seconds = 0.1
    live = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(live), json={})
    assert wait_for_live(admin_client, live)["live"]["status"] == "live"
    scheduled = published_article(app, admin_client, agent_headers)
    at = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert admin_client.post(go_live_url(scheduled), json={"at": at}).status_code == 202
    ready = published_article(app, admin_client, agent_headers)

    tab = _page(admin_client, "/review?status=published")
    assert _count(tab, "published") == 2 and _count(tab, "all") == 3
    assert {m for m in re.findall(r'<tr data-task-id="([^"]+)"', tab)} == {scheduled["id"], ready["id"]}
    assert "2 个任务" in _text(tab) or "共 2 " in _text(tab) or "of 2 " in _text(tab)
    everything = _page(admin_client, "/review?status=all")
    assert _count(everything, "published") == 2 and _count(everything, "all") == 3
    shown = _row(everything, live)
    assert "已发表" in shown and "草稿已就绪" not in shown and shown.count("已发表") == 1
    assert "草稿已就绪" in _row(everything, ready) and "已定时发表" in _row(everything, scheduled)
    # The Readers filter still finds the live one; the "Draft ready" tab beside it has none of them.
    assert _count(_page(admin_client, "/review?live=live"), "published") == 0

    head = _page(admin_client, f"/review/{live['id']}")
    head = head[head.index('<header class="detail-head">') : head.index("</header>", head.index('class="detail-head"'))]
    assert re.search(r'id="task-status">([^<]+)<', head)[1] == "已发表"
    assert "草稿已就绪" not in head
    en = _page(admin_client, f"/review/{ready['id']}", "en")
    assert re.search(r'id="task-status">([^<]+)<', en)[1] == "Draft ready"


def test_a_live_article_offers_no_preview_of_its_removed_draft(app, admin_client, agent_headers):
    """WeChat removes a draft once it is published (a preview would be 409 draft_gone): a live task's page offered
    "send preview to phone" all the same, its sentence naming the raw DRAFT_… id and "before it goes out"."""
    task = published_article(app, admin_client, agent_headers)
    page = _page(admin_client, f"/review/{task['id']}")
    form = page[page.index('id="phone-preview"') :]
    assert "DRAFT_" not in _text(form[: form.index("</form>")])
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    assert wait_for_live(admin_client, task)["live"]["status"] == "live"
    assert 'id="phone-preview"' not in _page(admin_client, f"/review/{task['id']}")


def test_accounts_are_named_in_the_phone_preview_and_the_timeline(app, admin_client, agent_headers):
    task = published_article(app, admin_client, agent_headers)
    page = _page(admin_client, f"/review/{task['id']}")
    assert "发给 硅基崛起 的一位粉丝" in _text(page)
    created = re.search(r'<li data-event="task_created">(.*?)</li>', page, re.S)[1]
    assert "公众号：硅基崛起" in _text(created) and "silicon-rise" not in _text(created)
    english = _page(admin_client, f"/review/{task['id']}", "en")
    assert "one follower of 硅基崛起" in _text(english)
    assert "Account: 硅基崛起" in _text(re.search(r'<li data-event="task_created">(.*?)</li>', english, re.S)[1])


def test_a_refused_time_has_the_pages_own_words_for_its_reason(app, admin_client, agent_headers):
    """The API says why in English; the page's scripts get the reason in the page's language (static/api.js
    shows it beside the field, docs/api.md §18), for every reason a time is refused."""
    task = published_article(app, admin_client, agent_headers)
    reasons = []
    for at in (datetime.now(UTC) - timedelta(hours=2), datetime.now(UTC) + timedelta(days=31)):
        answer = admin_client.post(go_live_url(task), json={"at": at.isoformat()})
        assert answer.status_code == 400
        reasons += answer.get_json()["error"]["details"]["at"]
    words = {}
    for language in ("zh-CN", "en"):
        page = _page(admin_client, f"/review/{task['id']}", language)
        words[language] = json.loads(
            re.search(r'<script type="application/json" id="page-words">(.*?)</script>', page, re.S)[1]
        )
    said = [words["zh-CN"][f"api.reason.{reason}"] for reason in reasons]
    assert said == [
        "这个时间已经过去：请选一个将来的时间，或者立即发表。",
        "这个时间在 30 天以后：请选 30 天以内的时间。",
    ]
    assert [words["en"][f"api.reason.{reason}"] for reason in reasons] == [
        "This time has passed: choose a time ahead, or publish now.",
        "This time is more than 30 days ahead: choose a time within 30 days.",
    ]
