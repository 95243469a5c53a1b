"""Readers' comments on the pages (docs/api.md §23), in Chromium, in both languages, on a phone and a wide
screen: the task page's 留言 section lists a live task's comments newest first with the agent's waiting proposal
in the reply box, one tap sends it (the fake platform gets reply/add with that text), a filter narrows the list;
/comments lists the unanswered oldest first and an answered one leaves it; a refusal says why in words and
changes nothing. Screenshots: tests/output/comments-*-{zh-CN,en}-{phone,wide}.png."""

import time

import pytest
from playwright.sync_api import expect

from models import ReviewTask, TaskLive, db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN
from tests.helpers.browser import DEMO_ADMIN, OUTPUT, axe_violations, serve_with_workers, sideways_overflow, sign_in_as
from tests.helpers.publishing import go_live_url, wait_for_live
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset

AGENT = {"x-review-agent-token": AGENT_TOKEN}
PROPOSAL = "谢谢提问：下一期会细讲 Thanks for asking"
WORDS = {
    "zh-CN": {
        "send": "发送回复",
        "feature": "设为精选",
        "featured": "精选",
        "section": "留言",
        "nav": "留言",
        "sent": "回复已发给读者。",
        "refused": "微信拒绝了：文章或留言因安全原因受限（平台错误 88002）。未做任何更改。",
    },
    "en": {
        "send": "Send the reply",
        "feature": "Feature",
        "featured": "Featured",
        "section": "Readers' comments",
        "nav": "Comments",
        "sent": "The reply was sent to the reader.",
        "refused": "WeChat refused: the article or the comment is limited for safety (WeChat errcode 88002). "
        "Nothing was changed.",
    },
}


@pytest.fixture
def live_server(make_app):
    with serve_with_workers(make_app, WECHAT_COMMENTS_ENABLED=False) as server:
        yield server


def live_with_comments(live_server, topic):
    """A task live on the fake platform with three readers' comments, fetched, and the agent's proposal for
    the middle one; (task, admin client, {text: comment id})."""
    app, fake = live_server.app, live_server.platform
    client = app.test_client()
    client.post("/api/auth/login", data={"username": DEMO_ADMIN, "password": ADMIN_PASSWORD})
    cover = make_asset(app, 900, 500)
    task = create_task(client, AGENT, article_payload([cover["url"]], topic=topic))
    answer = client.post(decision_url(task), json=approve_article(task, cover, action="approve_and_publish"))
    assert answer.get_json()["status"] == "published", answer.get_json()
    assert client.post(go_live_url(task), json={}).status_code == 202
    assert wait_for_live(client, task, seconds=30)["live"]["status"] == "live"
    with db.connection_context():
        msg_data_id = TaskLive.get(TaskLive.task == ReviewTask.get(ReviewTask.task_id == task["id"]).id).msg_data_id
    now = int(time.time())
    for back, text in ((3000, "最早的问题 first question"), (2000, "第二条 second one"), (1000, "最新的 newest")):
        fake.add_comment(str(msg_data_id), 0, text, openid=f"oReader{back}", create_time=now - back)
    result = app.test_cli_runner().invoke(args=["fetch-comments"])
    assert result.exit_code == 0, result.output
    listed = client.get(f"/api/review/tasks/{task['id']}/comments").get_json()["comments"]
    ids = {c["content"]: c["id"] for c in listed}
    second = ids["第二条 second one"]
    proposed = client.post(
        f"/api/review/agent/tasks/{task['id']}/comments/{second}/proposals", json={"content": PROPOSAL}, headers=AGENT
    )
    assert proposed.status_code == 201, proposed.get_json()
    return task, client, ids


def texts(page, scope="#comments"):
    return page.locator(f"{scope} li.comment .comment-text").all_text_contents()


def check_fits(page, where):
    assert sideways_overflow(page) <= 0, where
    assert axe_violations(page) == [], where


@pytest.mark.parametrize("size", ["phone", "wide"])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_proposal_sent_in_one_tap_a_filter_and_the_unanswered_list(open_page, live_server, console, language, size):
    words, fake = WORDS[language], live_server.platform
    task, client, ids = live_with_comments(live_server, f"留言 {language} {size}")
    page = open_page(language, size)
    sign_in_as(page, language, f"/review/{task['id']}")
    section = page.locator("#comments")
    assert section.locator("h2").text_content().startswith(words["section"])
    assert texts(page) == ["最新的 newest", "第二条 second one", "最早的问题 first question"]  # newest first
    assert all(len(r) == 8 for r in [t.split()[-1] for t in section.locator(".reader").all_text_contents()])
    second = page.locator(f"#comment-{ids['第二条 second one']}")
    assert second.locator("textarea").input_value() == PROPOSAL  # the agent's waiting proposal, prefilled
    assert page.locator(f"#comment-{ids['最新的 newest']} textarea").input_value() == ""
    check_fits(page, "task page")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(OUTPUT / f"comments-task-{language}-{size}.png"))

    second.get_by_role("button", name=words["send"]).click()
    page.locator(f"#comment-{ids['第二条 second one']} .reply-text").wait_for()
    second = page.locator(f"#comment-{ids['第二条 second one']}")
    assert second.locator(".reply-text").text_content() == PROPOSAL
    expect(page.locator("#comments-message")).to_have_text(words["sent"])  # the script has run
    sent = [r["json"] for r in fake.requests_to("comment/reply/add")]
    assert [(r["content"], r["index"]) for r in sent] == [(PROPOSAL, 0)]
    stored = client.get(f"/api/review/tasks/{task['id']}/comments").get_json()["comments"]
    assert [p["state"] for c in stored if c["id"] == ids["第二条 second one"] for p in c["proposals"]] == ["sent"]

    # Feature the oldest, then the "featured" filter lists it alone.
    oldest = page.locator(f"#comment-{ids['最早的问题 first question']}")
    oldest.get_by_role("button", name=words["feature"], exact=True).click()
    page.locator(f"#comment-{ids['最早的问题 first question']} .comment-featured").wait_for()
    assert [r["json"]["user_comment_id"] for r in fake.requests_to("comment/markelect")] == [1]
    section.get_by_role("link", name=words["featured"], exact=True).click()
    page.wait_for_url("**comments=featured**")
    assert texts(page) == ["最早的问题 first question"]
    check_fits(page, "task page, featured")

    # /comments: the nav link, the unanswered oldest first, each linking to its task's section.
    page.locator("header.topbar nav").get_by_role("link", name=words["nav"], exact=True).click()
    page.wait_for_url("**/comments")
    assert texts(page, "main") == ["最早的问题 first question", "最新的 newest"]
    link = page.locator(f"#comment-{ids['最早的问题 first question']} .comment-task a")
    assert link.get_attribute("href") == f"/review/{task['id']}#comment-{ids['最早的问题 first question']}"
    check_fits(page, "/comments")
    page.screenshot(path=str(OUTPUT / f"comments-list-{language}-{size}.png"), full_page=True)
    oldest = page.locator(f"#comment-{ids['最早的问题 first question']}")
    oldest.locator("textarea").fill("已回复 answered here")
    oldest.get_by_role("button", name=words["send"]).click()
    expect(page.locator("#comments-message")).to_have_text(words["sent"])  # after the page was read again
    assert texts(page, "main") == ["最新的 newest"]
    assert [r["json"]["content"] for r in fake.requests_to("comment/reply/add")][-1] == "已回复 answered here"
    console.assert_clean()


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_refused_reply_says_why_and_changes_nothing(open_page, live_server, console, language):
    console.allow(r"status of 502")
    words, fake = WORDS[language], live_server.platform
    task, client, ids = live_with_comments(live_server, f"拒绝 {language}")
    page = open_page(language, "phone")
    sign_in_as(page, language, f"/review/{task['id']}")
    before = client.get(f"/api/review/tasks/{task['id']}/comments").get_json()
    fake.comments_fail_next(88002)
    second = page.locator(f"#comment-{ids['第二条 second one']}")
    second.get_by_role("button", name=words["send"]).click()
    error = second.locator(".comment-error")
    error.wait_for()
    assert error.text_content() == words["refused"]
    assert second.locator("textarea").input_value() == PROPOSAL  # kept, to send again
    assert client.get(f"/api/review/tasks/{task['id']}/comments").get_json() == before
    check_fits(page, "refused")
    second.screenshot(path=str(OUTPUT / f"comments-refused-{language}-phone.png"))
    console.assert_clean()
