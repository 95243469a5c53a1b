"""Admin HTML pages without a browser: sign-in redirects, permissions, rendering, the preview
route, and the demo mode's setup."""

import json
import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from models import ReviewTask, db
from tests.helpers.app import create_admin, login
from tests.helpers.review import article_payload, create_task

PAGES = ["/review", "/review?status=all", "/feedback"]


@pytest.fixture
def demo_data(app, admin_client):
    from services.demo import seed

    with db.connection_context():
        return seed(app.extensions["settings"], "admin")


@pytest.mark.parametrize("path", ["/review", "/review/some-task?tab=1", "/feedback", "/feedback/some-id"])
def test_signed_out_pages_redirect_to_login_with_next(client, path):
    response = client.get(path)
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/login?next=" + path.split("?")[0])


def test_the_start_page_is_the_review_list(client):
    assert client.get("/").headers["Location"] == "/review"


def test_a_feedback_only_admin_starts_at_the_feedback_list(app):
    create_admin("triage", permissions="feedback")
    client = app.test_client()
    login(client, "triage")
    assert client.get("/").headers["Location"] == "/feedback"
    assert '<a class="brand" href="/feedback">' in client.get("/feedback").get_data(as_text=True)


def test_pages_are_not_kept_in_the_browser_cache(admin_client, demo_data):
    """Back to a list after a decision loads it again (a cached page showed the task as still pending)."""
    for url in ("/review", f"/review/{demo_data['tasks'][0]['id']}", "/feedback"):
        assert admin_client.get(url).headers["Cache-Control"] == "no-store", url


def test_pages_run_only_their_own_scripts_in_no_frame_and_answers_are_not_cached(admin_client, demo_data):
    task = demo_data["tasks"][0]
    for url in ("/review", f"/review/{task['id']}", "/feedback", "/api/docs", "/login"):
        headers = admin_client.get(url).headers
        policy = dict(part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";"))
        assert policy["script-src"] == "'self'" and policy["frame-ancestors"] == "'none'", url
        assert policy["img-src"] == "'self' mmbiz.qpic.cn:*", url  # REVIEW_REMOTE_IMAGE_HOSTS
        assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff", url
    for url in (f"/api/review/tasks/{task['id']}", "/api/feedbacks", "/api/feedbacks/export.csv"):
        headers = admin_client.get(url).headers
        assert headers["Cache-Control"] == "no-store" and headers["X-Content-Type-Options"] == "nosniff", url


def test_the_text_counters_show_the_limits_a_decision_is_checked_against(admin_client, demo_data):
    article = next(t for t in demo_data["tasks"] if t["contentType"] == "article")
    html = admin_client.get(f"/review/{article['id']}").get_data(as_text=True)
    limits = dict(re.findall(r'data-count-for="(\w+)" data-limit="(\d+)"', html))
    assert limits == {"title": "64", "summary": "100", "author": "16"}


@pytest.mark.parametrize(("title", "warned"), [("芯" * 32, False), ("芯" * 33, True)], ids=["32", "33"])
def test_the_title_counter_warns_past_the_platforms_documented_32(admin_client, agent_headers, title, warned):
    # docs/api.md §5 "Titles": the API takes 64, the platform's documents give 32 since 2025-12
    payload = article_payload()
    payload["candidates"]["titles"] = [title]
    task = create_task(admin_client, agent_headers, payload)
    html = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    assert re.search(f'data-count-for="title" data-limit="64" data-warn="32">{len(title)}<', html)
    [note] = re.findall(r'<span class="warn-flag" data-warn-for="title" ?(hidden)?>([^<]*)</span>', html)
    assert note[0] == ("" if warned else "hidden")
    assert "documents give a title 32 characters: the platform may refuse a longer one" in note[1]
    assert 'data-count-for="summary" data-limit="100" data-warn="100"' in html  # no warning of its own


@pytest.mark.parametrize(
    ("permissions", "allowed", "refused"),
    [
        ("review", ["/review"], ["/feedback"]),
        ("feedback", ["/feedback"], ["/review"]),
    ],
)
def test_pages_need_their_permission(app, permissions, allowed, refused):
    create_admin("limited", permissions=permissions)
    client = app.test_client()
    login(client, "limited")
    for path in allowed:
        assert client.get(path).status_code == 200
    for path in refused:
        response = client.get(path)
        assert response.status_code == 403
        assert "text/html" in response.content_type and "permission" in response.get_data(as_text=True)
    nav = client.get(allowed[0]).get_data(as_text=True)
    assert ('href="/feedback"' in nav) == ("feedback" in permissions)


def test_every_page_renders_with_logout_and_the_sample_data(admin_client, demo_data):
    urls = PAGES + [f"/review/{t['id']}" for t in demo_data["tasks"]]
    urls += [f"/feedback/{f['id']}" for f in demo_data["feedback"]]
    for url in urls:
        response = admin_client.get(url)
        assert response.status_code == 200, url
        html = response.get_data(as_text=True)
        assert 'action="/api/auth/logout"' in html and ">Log out</button>" in html, url
        assert "pages.css" in html
    listing = admin_client.get("/review?status=all").get_data(as_text=True)
    assert all(task["topic"] in listing for task in demo_data["tasks"])
    created = demo_data["tasks"][0]["createdAt"]  # UTC in datetime, REVIEW_TIME_ZONE in the text (docs/api.md §14)
    local = datetime.fromisoformat(created.replace("Z", "+00:00")).astimezone(ZoneInfo("Asia/Shanghai"))
    assert f'<time datetime="{created}">{local:%Y-%m-%d %H:%M}</time>' in listing


def test_detail_shows_outline_segments_and_comment_defaults(admin_client, demo_data):
    article = demo_data["tasks"][0]
    html = admin_client.get(f"/review/{article['id']}").get_data(as_text=True)
    assert re.search(r'<ol class="outline"><li>背景</li><li>现状</li><li>展望</li></ol>', html)
    image_post = next(t for t in demo_data["tasks"] if t["candidates"].get("commentSettings"))
    html = admin_client.get(f"/review/{image_post['id']}").get_data(as_text=True)
    assert re.search(r'id="need-open-comment" checked', html)
    assert re.search(r'id="only-fans" >', html)


def test_an_author_left_empty_stays_empty(admin_client, demo_data):
    """Only a task without saved selections starts from the first author candidate."""
    from models.review import ReviewTask

    article = next(t for t in demo_data["tasks"] if t["candidates"].get("authors"))
    html = admin_client.get(f"/review/{article['id']}").get_data(as_text=True)
    first = article["candidates"]["authors"][0]
    assert re.search(r'id="final-author"[^>]*value="' + re.escape(first) + '"', html)
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == article["id"])
        row.selections = {"title": "标题", "summary": "摘要"}  # saved without an author
        row.save()
    html = admin_client.get(f"/review/{article['id']}").get_data(as_text=True)
    assert re.search(r'id="final-author"[^>]*value=""', html)
    assert not re.search(r'name="author-choice" value="\d+" checked', html)


def test_unknown_task_and_feedback_are_html_404_pages(admin_client):
    for path, back in (("/review/no-such-task", "/review"), ("/feedback/no-such-feedback", "/feedback")):
        response = admin_client.get(path)
        assert response.status_code == 404 and "text/html" in response.content_type
        assert f'<a href="{back}">Back to the' in response.get_data(as_text=True)


def test_bad_list_filters_are_explained_not_failed(admin_client, demo_data):
    html = admin_client.get("/review?from=2026-02-02&to=2026-02-01").get_data(as_text=True)
    assert 'id="err-from"' in html and "must be earlier than or equal to" in html
    html = admin_client.get("/review?status=nonsense").get_data(as_text=True)
    assert re.search(r'id="filter-error">[^<]*[^.]\. Change the filters below', html)
    html = admin_client.get("/review?publicAccount=nobody").get_data(as_text=True)
    assert re.search(r'id="err-publicAccount"[^>]*>\s*Must be one of', html)
    html = admin_client.get("/feedback?pageSize=1&page=0").get_data(as_text=True)
    assert re.search(r'id="err-page"[^>]*>\s*Must be greater than or equal to 1', html)


def test_preview_renders_the_themed_article(admin_client):
    response = admin_client.post(
        "/api/review/preview",
        json={
            "markdown": "## 标题\n\n正文 [链接](https://example.com)",
            "themeTemplate": "tech-blue",
            "publicAccount": "silicon-rise",
        },
    )
    assert response.status_code == 200
    html = response.get_json()["html"]
    assert "<h2" in html and "style=" in html and "<style" not in html
    response = admin_client.post("/api/review/preview", json={"markdown": "x", "themeTemplate": "neon"})
    assert response.status_code == 400
    assert "themeTemplate" in response.get_json()["error"]["details"]


def test_a_body_image_that_is_no_asset_is_not_loaded_by_the_page(app, client, admin_client, agent_headers):
    """An agent's body could sign every reviewer who opens the task out (<img src="/api/auth/logout">) or
    tell an outside host who reads it; the page shows a placeholder for any image that is no asset."""
    from tests.helpers.review import article_payload, body_option, create_task, make_asset

    picture = make_asset(app, 900, 500)
    body = f"![out](/api/auth/logout)\n\n![tracker](https://tracker.example/p.png)\n\n![ok]({picture['url']})"
    payload = article_payload([picture["url"]])
    payload["candidates"]["bodyOptions"] = [body_option("b1", "x")]
    task = create_task(client, agent_headers, payload)
    with db.connection_context():  # as a task stored before creation refused local non-asset paths
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        row.candidates = {**row.candidates, "bodyOptions": [body_option("b1", body)]}
        row.save()

    html = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    sources = re.findall(r'<img[^>]* src="([^"]*)"', html)
    assert "/api/auth/logout" not in sources and not any("tracker.example" in src for src in sources)
    assert "/static/not-an-asset.svg" in sources and picture["url"] in sources
    preview = admin_client.post("/api/review/preview", json={"markdown": body, "publicAccount": "silicon-rise"})
    assert re.findall(r'src="([^"]*)"', preview.get_json()["html"]) == ["/static/not-an-asset.svg"] * 2 + [
        picture["url"]
    ]
    assert admin_client.get("/static/not-an-asset.svg").status_code == 200
    assert admin_client.get(f"/api/review/tasks/{task['id']}").status_code == 200  # still signed in


def test_preview_needs_the_review_permission(client, app):
    assert client.post("/api/review/preview", json={"markdown": "x"}).status_code == 401
    create_admin("fb", permissions="feedback")
    login(client, "fb")
    assert client.post("/api/review/preview", json={"markdown": "x"}).status_code == 403


def test_demo_mode_starts_a_fake_platform_an_admin_and_sample_data(capsys, monkeypatch):
    from app import create_app
    from cli.demo import build_demo_app

    monkeypatch.setenv("REVIEW_AGENT_TOKEN", "a-real-production-token")  # never used nor printed by the demo
    app, banner = build_demo_app(
        create_app,
        {"WEBHOOK_SENDER_ENABLED": False, "TEAM_MESSAGES_ENABLED": False, "CHAT_CARDS_ENABLED": False},
        exit_on_sigterm=False,
    )
    text = "\n".join(banner)
    assert "a-real-production-token" not in text and app.config["REVIEW_AGENT_TOKEN"] in text
    client_token = re.search(r"Client token\s+(\S+)", text).group(1)
    password = re.search(r"Password\s+(\S+)", text).group(1)
    assert app.config["WECHAT_API_BASE"].startswith("http://127.0.0.1:")
    assert app.config["WECHAT_SILICON_RISE_APPID"] and app.config["REVIEW_AGENT_TOKEN"]
    client = app.test_client()
    login(client, "demo", password)
    tasks = client.get("/api/review/tasks?status=all").get_json()
    assert {(t["publicAccount"], t["contentType"]) for t in tasks} == {
        ("silicon-rise", "article"),
        ("silicon-rise", "image_post"),
        ("carbon-fitness", "article"),
        ("carbon-fitness", "image_post"),
    }
    assert client.get("/api/feedbacks").get_json()["counts"]["all"] == 4
    # The day's edition of three articles went to the fake platform's followers (docs/api.md §21).
    [edition] = client.get("/api/editions").get_json()
    assert edition["status"] == "sent" and len(edition["taskIds"]) == 3, edition
    assert "/editions" in text and "yesterday's edition of 3 articles" in text
    sent = app.test_client().post(
        "/api/feedbacks",
        headers={"x-feedback-client-token": client_token},
        json={"appName": "demo", "appVersion": "1", "platform": "web", "type": "bug", "title": "t", "content": "c"},
    )
    assert sent.status_code == 201, sent.get_json()
    # The fake platform answers the demo credentials.
    import requests

    token = requests.post(
        app.config["WECHAT_API_BASE"] + "/cgi-bin/stable_token",
        json={
            "grant_type": "client_credential",
            "appid": app.config["WECHAT_SILICON_RISE_APPID"],
            "secret": app.config["WECHAT_SILICON_RISE_SECRET"],
        },
        timeout=5,
    ).json()
    assert "access_token" in token
    # How to point an MCP client at the demo: a stdio server entry that names this service and token.
    [config] = [json.loads(line) for line in (line.strip() for line in banner) if line.startswith('{"mcpServers"')]
    entry = config["mcpServers"]["content-review"]
    assert entry["args"] == ["-m", "agentmcp"] and Path(entry["cwd"], "agentmcp", "__main__.py").is_file()
    assert entry["env"] == {
        "REVIEW_BASE_URL": f"http://{app.config['HOST']}:{app.config['PORT']}",
        "REVIEW_AGENT_TOKEN": app.config["REVIEW_AGENT_TOKEN"],
    }
    db.close()


def test_seed_demo_command_adds_sample_data_once(app):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["seed-demo"])
    assert result.exit_code == 0 and "added 5 tasks" in result.output
    again = runner.invoke(args=["seed-demo"])
    assert again.exit_code != 0 and "already holds review tasks" in again.output


def test_feedback_list_pages_through_the_matches(app, admin_client):
    from schemas.feedback import FeedbackCreateSchema
    from services.feedback import intake

    with db.connection_context():
        for number in range(25):
            data = FeedbackCreateSchema().load(
                {
                    "type": "bug",
                    "title": f"Report {number:02d}",
                    "content": "text",
                    "appName": "reader",
                    "appVersion": "1.0",
                    "platform": "web",
                }
            )
            intake.create_feedback(data, "web", f"203.0.113.{number}", app.extensions["settings"])
    first = admin_client.get("/feedback?type=bug").get_data(as_text=True)
    assert "Showing 1–20 of 25" in first and "Page 1 of 2" in first
    assert re.search(r'<a rel="next" href="/feedback\?page=2&amp;status=all&amp;type=bug">', first)
    second = admin_client.get("/feedback?type=bug&page=2").get_data(as_text=True)
    assert "Showing 21–25 of 25" in second and "Report 00" in second and "Report 24" not in second
    assert 'rel="prev"' in second and 'rel="next"' not in second
    beyond = admin_client.get("/feedback?type=bug&page=9").get_data(as_text=True)
    assert "Page 9 is past the last page: 25 feedback records match" in beyond and "Showing" not in beyond


def test_error_page_links_to_a_section_the_admin_may_open(make_app):
    from tests.helpers.app import create_admin, login

    app = make_app()
    create_admin("triage", permissions="feedback")
    client = app.test_client()
    login(client, "triage")
    page = client.get("/review")
    assert page.status_code == 403
    assert 'href="/feedback"' in page.get_data(as_text=True).split("<main>", 1)[1]
    assert 'href="/review">Back' not in page.get_data(as_text=True)


def test_feedback_detail_shows_extra_as_readable_json_and_small_files_in_bytes(app, admin_client):
    import html as html_module
    import io
    import json

    client = app.test_client()
    headers = {"x-feedback-client-token": "client-web-token"}
    created = client.post(
        "/api/feedbacks",
        headers=headers,
        json={
            "type": "bug",
            "title": "Extra",
            "content": "With extra data",
            "appName": "reader",
            "appVersion": "1.0",
            "platform": "web",
            "extra": {"screen": "<b>首页</b>", "retries": 2},
        },
    ).get_json()
    log = client.post(
        f"/api/feedbacks/{created['id']}/attachments",
        headers=headers,
        content_type="multipart/form-data",
        data={"kind": "log_file", "file": (io.BytesIO(b"x" * 32), "app.log")},
    )
    assert log.status_code == 201, log.get_data(as_text=True)
    html = admin_client.get(f"/feedback/{created['id']}").get_data(as_text=True)
    shown = html_module.unescape(re.search(r'<pre class="extra">(.*?)</pre>', html, re.S).group(1))
    assert json.loads(shown) == {"screen": "<b>首页</b>", "retries": 2}  # escaped once, as text (no \\u003c)
    assert "<b>首页" not in html
    assert "Log file · 32 bytes ·" in html
    from blueprints.pages import filesize

    assert [filesize(n) for n in (1, 1024, 1048575, 3 * 1048576)] == ["1 byte", "1.0 KiB", "1.0 MiB", "3.0 MiB"]
