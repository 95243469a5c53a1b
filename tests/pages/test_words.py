"""The pages' words (docs/api.md §14): Chinese pages in Chinese punctuation with no English interface text
(error pages included), one term per meaning (a feedback of type `account` is about the app user's 账号,
never a 公众号), the list's publish-attempt column saying what it counts, and the scripts and macros taking
their words from the catalogue instead of asking which language the page is in."""

import html
import re
from pathlib import Path

import pytest

from models import db
from tests.helpers.app import create_admin, login
from tests.helpers.review import article_selections, decision_url, locked_except, make_asset

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def chinese(app):
    create_admin()
    client = app.test_client()
    login(client)
    client.set_cookie("review_lang", "zh-CN")
    return client


@pytest.fixture
def demo_data(app, chinese):
    from services.demo import seed

    with db.connection_context():
        return seed(app.extensions["settings"], "admin")


def visible_text(page):
    """The text a person reads: no scripts, styles or tags; entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_404_page_is_chinese_on_a_chinese_page(chinese):
    answer = chinese.get("/review/no-such-task")
    assert answer.status_code == 404
    text = visible_text(answer.get_data(as_text=True))
    assert "要找的内容不存在或已删除。" in text and "返回审核列表" in text
    assert "/review/no-such-task" in text  # the address asked for, as it was asked
    # Left: the switch's own name, the API link (a name) and the signed-in user's name (data).
    words = set(re.findall(r"[A-Za-z]{2,}", text.replace("/review/no-such-task", ""))) - {"English", "API", "admin"}
    assert words == set(), words  # "No review task with id …" stays in the JSON API


def test_an_english_404_page_keeps_the_particulars(app):
    create_admin()
    client = app.test_client()
    login(client)
    client.set_cookie("review_lang", "en")
    text = visible_text(client.get("/review/no-such-task").get_data(as_text=True))
    assert "This no longer exists." in text and "No review task with id" in text


def test_a_feedback_about_an_account_is_about_the_users_account(chinese, demo_data):
    account = next(item for item in demo_data["feedback"] if item["type"] == "account")
    detail = visible_text(chinese.get(f"/feedback/{account['id']}").get_data(as_text=True))
    assert "账号" in detail and "公众号" not in detail
    listing = chinese.get("/feedback").get_data(as_text=True)
    assert re.search(r'<option value="account"\s*>账号</option>', listing)
    row = re.search(rf'<tr data-feedback-id="{account["id"]}">.*?</tr>', listing, re.S).group(0)
    assert "账号" in visible_text(row) and "公众号" not in visible_text(row)
    review_list = chinese.get("/review?status=all").get_data(as_text=True)  # a WeChat account stays one
    assert '<label for="f-account">公众号</label>' in review_list


def test_the_list_says_its_column_counts_publish_attempts(chinese, demo_data):
    page = chinese.get("/review?status=all").get_data(as_text=True)
    assert '<th scope="col">生成次数</th>' in page and 'data-label="生成次数"' in page
    assert 'data-label="发布"' not in page


def test_the_rejection_banner_uses_chinese_punctuation(app, chinese, agent_headers):
    from tests.helpers.review import article_payload, create_task

    cover = make_asset(app, 900, 500)
    task = create_task(app.test_client(), agent_headers, article_payload([cover["url"]]))
    selections = article_selections(task, cover)
    rejected = ["title", "summary"]
    answer = chinese.post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "rejectionReason": "style_mismatch",
            "rejectedElements": rejected,
            "rejectionNote": "标题太长",
            "selections": selections,
            "lockedSelections": locked_except(selections, rejected),
        },
    )
    assert answer.status_code == 200, answer.get_json()
    page = chinese.get(f"/review/{task['id']}").get_data(as_text=True)
    banner = re.sub(
        r"\s+", "", visible_text(re.search(r'<section class="notice warn".*?</section>', page, re.S).group(0))
    )
    assert banner == "已退回修改（风格不符）。智能体需要修改：标题、摘要。备注：标题太长", banner
    timeline = visible_text(re.search(r'<ol class="timeline">.*?</ol>', page, re.S).group(0))
    assert "原因：" in timeline and "原因:" not in timeline


def test_scripts_and_macros_never_ask_which_language_the_page_is_in():
    """Their words come from the one JSON block (script_words) and the catalogue (issue 36, item 1)."""
    for name in ("static/api.js", "static/words.js", "templates/_macros.html"):
        source = (ROOT / name).read_text()
        assert not re.search(r'language\s*[!=]==?\s*"(en|zh-CN)"|page_language\s*[!=]=', source), name
