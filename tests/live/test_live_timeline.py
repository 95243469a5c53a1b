"""The timeline tells who sent what to readers (docs/api.md §4 Timeline, §18): who asked for it and for
when, who cancelled it, the submission, the article's link, a failure's reason; on the task page in the
page's language, accounts by their names."""

import html as markup
import re
from datetime import UTC, datetime, timedelta

from tests.helpers.publishing import go_live_url, published_article, wait_for_live

LIVE_TYPES = ("live_scheduled", "live_canceled", "live_submitted", "live", "live_failed")


def _live_events(task):
    return [event for event in task["timeline"] if event["type"] in LIVE_TYPES]


def _timeline_html(client, task, language):
    client.set_cookie("review_lang", language)
    page = client.get(f"/review/{task['id']}").get_data(as_text=True)
    return page[page.index('id="timeline-heading"') :]


def _shown(html, event_type):
    """The text of the timeline's first (newest) entry of `event_type`, tags taken out."""
    item = re.search(rf'<li data-event="{event_type}">(.*?)</li>', html, re.S)[1]
    return " ".join(markup.unescape(re.sub(r"<[^>]+>", " ", item)).split())


def test_going_live_now_tells_who_asked_the_submission_and_the_link(app, admin_client, agent_headers, fake, served_url):
    task = published_article(app, admin_client, agent_headers)
    fake.publish_seconds = 0.2
    assert admin_client.post(go_live_url(task), json={}).status_code == 202
    done = wait_for_live(admin_client, task)
    assert done["live"]["status"] == "live"
    events = {event["type"]: event for event in _live_events(done)}
    assert list(events) == ["live_scheduled", "live_submitted", "live"]
    asked = events["live_scheduled"]
    assert (asked["actor"], asked["actorName"]) == ("admin", "admin")
    assert abs(datetime.fromisoformat(asked["data"]["at"]) - datetime.now(UTC)) < timedelta(seconds=30)
    assert events["live_submitted"]["actor"] == "system"
    assert events["live_submitted"]["data"] == {"publishId": done["live"]["publishId"]}
    assert events["live"]["data"] == {"articleUrl": done["live"]["articleUrl"], "articleId": done["live"]["articleId"]}
    zh = _timeline_html(admin_client, done, "zh-CN")
    assert _shown(zh, "live_scheduled").startswith(tuple("0123456789"))  # the time first, as every entry
    assert "已请求发表给读者" in _shown(zh, "live_scheduled") and "操作人：admin" in _shown(zh, "live_scheduled")
    assert "已发表给读者" in _shown(zh, "live") and "链接： 打开文章" in _shown(zh, "live")  # the link, not its address
    assert f'href="{done["live"]["articleUrl"].replace("&", "&amp;")}"' in zh
    assert "已提交微信发表" in _shown(zh, "live_submitted")
    en = _timeline_html(admin_client, done, "en")
    assert "Published to readers" in _shown(en, "live") and "Link: Open the article" in _shown(en, "live")
    assert done["live"]["publishId"] not in _shown(zh, "live_submitted")  # the platform's ids stay out


def test_a_schedule_and_its_cancelling_say_who_and_for_when(app, admin_client, agent_headers):
    task = published_article(app, admin_client, agent_headers)
    at = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    assert admin_client.post(go_live_url(task), json={"at": at.isoformat()}).status_code == 202
    canceled = admin_client.delete(go_live_url(task)).get_json()
    events = _live_events(canceled)
    assert [event["type"] for event in events] == ["live_scheduled", "live_canceled"]
    for event in events:
        assert (event["actor"], event["actorName"]) == ("admin", "admin")
        assert datetime.fromisoformat(event["data"]["at"]) == at
    zh = _timeline_html(admin_client, canceled, "zh-CN")
    shown = _shown(zh, "live_canceled")
    assert "已取消定时发表" in shown and "操作人：admin" in shown and "发表时间：" in shown
    assert f'<time datetime="{events[1]["data"]["at"]}">' in zh  # in the viewer's zone, as every time


def test_a_failure_says_why_in_the_pages_language(app, admin_client, agent_headers, fake, served_url):
    fake.finish_next_publish_with(4)
    fake.publish_seconds = 0.1
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    done = wait_for_live(admin_client, task)
    assert done["live"]["status"] == "failed"
    [failed] = [event for event in done["timeline"] if event["type"] == "live_failed"]
    assert failed["actor"] == "system"
    assert failed["data"]["failReason"] == "refused by the platform's review (publish_status 4)"
    assert failed["data"]["failCode"] == "publish_status_4"
    assert _shown(_timeline_html(admin_client, done, "zh-CN"), "live_failed").endswith(
        "发表失败 操作人：系统 原因：未通过平台审核（publish_status 4）"
    )
    assert "Reason: refused by the platform's review (publish_status 4)" in _shown(
        _timeline_html(admin_client, done, "en"), "live_failed"
    )


def test_a_refused_submission_is_told_once(app, admin_client, agent_headers, fake):
    fake.fail_next("freepublish/submit", errcode=48001, errmsg="api unauthorized")
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    done = wait_for_live(admin_client, task)
    assert [event["type"] for event in _live_events(done)] == ["live_scheduled", "live_failed"]
    assert "48001" in done["timeline"][-1]["data"]["failReason"]
