"""/editions without a browser (docs/api.md §21): who may open it, what it lists (draft-ready articles, the
edition being composed, the editions), and the quota, its protection and a failure in both languages."""

import json
import re

import pytest

from models import Edition, db
from rules.ids import now_iso
from tests.helpers.app import built_app, create_admin, login
from tests.helpers.editions import published_articles
from tests.helpers.publishing import platform_settings
from tests.helpers.review import article_payload, create_task


@pytest.fixture
def app(make_app, fake, request):
    extra = getattr(request, "param", {})
    with built_app(
        make_app, **platform_settings(fake, WECHAT_LIVE_WORKER_ENABLED=False, WECHAT_EDITIONS_ENABLED=False, **extra)
    ) as application:
        yield application


def page_data(html):
    return json.loads(
        re.search(r'<script type="application/json" id="edition-json">(.*?)</script>', html, re.S).group(1)
    )


def text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def open_as(client, language, path="/editions"):
    client.set_cookie("review_lang", language)
    answer = client.get(path)
    assert answer.status_code == 200, answer.get_data(as_text=True)[:500]
    return answer.get_data(as_text=True)


def _edition(task_ids, status="draft", **fields):
    now = now_iso()
    with db.connection_context():
        return Edition.create(
            edition_id=f"ed_{status}{len(task_ids)}{fields.get('fail_code', '')[-6:-1]}x",
            account="silicon-rise",
            status=status,
            task_ids=task_ids,
            created_by="admin",
            created_at=now,
            updated_at=now,
            **fields,
        ).edition_id


def test_signed_out_goes_to_sign_in_and_a_feedback_only_admin_is_refused(app):
    assert app.test_client().get("/editions").headers["Location"] == "/login?next=/editions"
    create_admin("triage", permissions="feedback")
    client = app.test_client()
    login(client, "triage")
    assert client.get("/editions").status_code == 403
    assert 'href="/editions"' not in client.get("/feedback").get_data(as_text=True)  # no link it cannot open


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ("Send to followers", "1 send left today", "(1 a day)", "Draft-ready articles", "Headline")),
        ("zh-CN", ("推送", "今天还可群发 1 次", "（每天 1 次）", "可推送的文章", "头条")),
    ],
)
def test_the_page_lists_draft_ready_articles_the_composed_edition_and_the_quota(
    app, admin_client, agent_headers, language, words
):
    tasks = published_articles(app, admin_client, agent_headers, 4)
    create_task(admin_client, agent_headers, article_payload(topic="pending"))  # not approved: not listed
    composed = _edition([tasks[3]["id"]])
    html = open_as(admin_client, language)
    shown = text(html)
    for word in words[:4]:
        assert word in shown, word
    assert f'<html lang="{language}">' in html and '<a href="/editions">' in html  # the nav link
    data = page_data(html)
    names = app.extensions["settings"].accounts
    assert data["account"] == "silicon-rise" and data["accountName"] == names["silicon-rise"]
    assert [a["id"] for a in data["candidates"]] == [t["id"] for t in reversed(tasks[:3])]  # newest first
    assert data["candidates"][0]["title"] == "第3篇：芯片的未来"
    assert data["candidates"][0]["cover"].startswith("/uploads/review/")  # the selected cover's asset
    assert data["composing"]["id"] == composed and [a["id"] for a in data["composing"]["articles"]] == [tasks[3]["id"]]
    assert data["quota"] == {**data["quota"], "left": 1, "limit": 1, "period": "day", "protected": False}
    # The other account: its own (empty) lists.
    other = page_data(open_as(admin_client, language, "/editions?account=carbon-fitness"))
    assert other["account"] == "carbon-fitness" and other["candidates"] == [] and other["composing"] is None


@pytest.mark.parametrize("app", [{"WECHAT_SILICON_RISE_MASS_PROTECTION": "true"}], indirect=True)
@pytest.mark.parametrize(
    ("language", "left", "protected"),
    [
        (
            "en",
            "0 sends left today",
            "Mass-send protection is on for this account: an administrator must confirm each "
            "send in WeChat within 30 minutes, or it is not sent.",
        ),
        (
            "zh-CN",
            "今天还可群发 0 次",
            "该公众号已开启群发保护：每次群发都须由管理员在 30 分钟内于微信中确认，否则不会发出。",
        ),
    ],
)
def test_a_used_quota_says_when_the_next_send_is_possible_and_protection_is_said(
    app, admin_client, agent_headers, language, left, protected
):
    tasks = published_articles(app, admin_client, agent_headers, 1)
    _edition([tasks[0]["id"]], "scheduled", send_at=now_iso())
    html = open_as(admin_client, language)
    shown = text(html)
    assert left in shown and protected in shown
    assert 'id="quota-next"' in html
    assert "scheduled" in [card for card in re.findall(r'data-status="(\w+)"', html)]


@pytest.mark.parametrize("app", [{"WECHAT_SILICON_RISE_MASS_QUOTA": "4/month"}], indirect=True)
def test_a_monthly_quota_is_said_per_month(app, admin_client):
    assert "4 sends left this month" in text(open_as(admin_client, "en"))
    assert "本月还可群发 4 次" in text(open_as(admin_client, "zh-CN"))


@pytest.mark.parametrize(
    ("language", "reason", "sent"),
    [
        ("en", "Not sent: the platform judged it advertising (err 10001).", "Followers"),
        ("zh-CN", "未发送：平台判定为广告（err 10001）。", "粉丝总数"),
    ],
)
def test_a_failed_edition_says_why_and_a_sent_one_its_counts_and_links(
    app, admin_client, agent_headers, language, reason, sent
):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    _edition([tasks[0]["id"]], "failed", fail_code="err(10001)", fail_reason="err(10001)", send_at=now_iso())
    url = "https://mp.weixin.qq.com/s/sent-article"
    _edition(
        [tasks[1]["id"], tasks[2]["id"]],
        "sent",
        send_at=now_iso(),
        article_urls=[url, None],
        counts={"total": 1280, "filter": 1280, "sent": 1275, "error": 5},
    )
    html = open_as(admin_client, language)
    shown = text(html)
    assert reason in shown
    assert sent in shown and "1275" in shown and "1280" in shown
    assert html.count(f'href="{url}"') == 1  # the sent headline's link; the second article has none yet
    data = page_data(html)
    assert tasks[0]["id"] in [c["id"] for c in data["candidates"]]  # a failed edition holds its articles no more
