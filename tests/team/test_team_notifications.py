"""Team notifications (docs/api.md §15): each robot's documented shape and signature against a fake that
checks them and answers as the real one does, e-mail through a real SMTP server, the three events,
the words and links of a message, the settings. Delivery under faults: tests/team/test_team_delivery.py."""

import io
import logging

import pytest

from fakeplatform.robots import REFUSALS
from models import OutboxMessage, db
from services.team.sender import retire
from tests.helpers.app import AGENT_TOKEN, built_app, create_admin, login
from tests.helpers.review import article_payload, create_task, decision_url, make_asset, patch_url
from tests.helpers.team import (
    DINGTALK_SECRET,
    FEISHU_SECRET,
    PUBLIC_URL,
    SMTP_PASSWORD,
    SMTP_USER,
    failed_mail,
    mail_settings,
    robot_settings,
    self_signed,
    send_pass,
    smtp_server,
    team_rows,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
CLIENT = {"x-feedback-client-token": "client-web-token"}


def test_each_robot_gets_its_documented_shape_signed_with_the_link(make_app, robots):
    with built_app(make_app, **robot_settings(robots)) as app:
        task = create_task(app.test_client(), AGENT, article_payload())
        assert [row.channel for row in team_rows()] == ["wecom", "feishu", "dingtalk"]  # one per channel
        assert send_pass(app) == {"wecom": 1, "feishu": 1, "dingtalk": 1}
    link = f"{PUBLIC_URL}/review/{task['id']}"
    for kind, robot in robots.items():
        [text] = robot.texts  # the fake delivered it: shape, key and (Feishu, DingTalk) signature checked
        where = [text.index(part) for part in ("silicon-rise", "芯片的未来", "新任务（待审核）", link)]
        assert where == sorted(where), (kind, text)
    body, _reply = robots["wecom"].attempts[0]
    assert body["msgtype"] == "markdown" and body["markdown"]["content"].startswith("**【silicon-rise】芯片的未来**")
    body, _reply = robots["feishu"].attempts[0]
    assert body["msg_type"] == "text" and body["timestamp"].isdigit() and body["sign"]
    body, _reply = robots["dingtalk"].attempts[0]
    assert body["msgtype"] == "markdown" and "芯片的未来" in body["markdown"]["title"]
    assert {row.status for row in team_rows()} == {"sent"}


@pytest.mark.parametrize(
    ("kind", "wrong"), [("feishu", "NOTIFY_FEISHU_SECRET"), ("dingtalk", "NOTIFY_DINGTALK_SECRET")]
)
def test_a_wrong_signing_secret_is_refused_by_the_robot_and_never_logged(make_app, robots, caplog, kind, wrong):
    caplog.set_level(logging.DEBUG)
    with built_app(make_app, **robot_settings(robots, **{wrong: "not-the-secret"})) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert send_pass(app, [kind]) == {kind: 0}
    assert robots[kind].texts == [] and robots[kind].attempts[0][1] == REFUSALS[kind]["sign"]
    [row] = team_rows(kind)
    assert (
        row.status == "pending"
        and row.attempts == 1
        and str(REFUSALS[kind]["sign"].get("code", 310000)) in row.last_error
    )
    service_log = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("services"))
    assert kind in service_log
    for secret in (robots[kind].key, robots[kind].url, "not-the-secret", FEISHU_SECRET, DINGTALK_SECRET):
        assert secret not in service_log and secret not in row.last_error


def test_webhook_keys_reach_no_log_line_even_at_debug(make_app, robots):
    """urllib3 logs each request's path and query at DEBUG: the service's handlers mask the keys."""
    stream, root = io.StringIO(), logging.getLogger()
    handler, level = logging.StreamHandler(stream), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    robots["wecom"].fail_next(1)
    try:
        with built_app(make_app, **robot_settings(robots, REVIEW_WEBHOOK_RETRY_DELAYS="0")) as app:  # guards it
            create_task(app.test_client(), AGENT, article_payload())
            assert send_pass(app) == {"wecom": 0, "feishu": 1, "dingtalk": 1}
            assert send_pass(app) == {"wecom": 1, "feishu": 0, "dingtalk": 0}
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    logged = stream.getvalue()
    assert "team notification to wecom failed" in logged and "45009" in logged and "send?key=***" in logged
    for secret in (*(robot.key for robot in robots.values()), FEISHU_SECRET, DINGTALK_SECRET):
        assert secret not in logged


@pytest.mark.parametrize("kind", ["wecom", "feishu", "dingtalk"])
def test_error_replies_are_failures_retried_until_delivered(make_app, robots, kind):
    """WeCom 45009 "api freq out of limit", a Feishu non-zero code, a DingTalk errcode: all retried."""
    robots[kind].fail_next(2)
    with built_app(make_app, **robot_settings(robots, REVIEW_WEBHOOK_RETRY_DELAYS="0,0,0")) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert [send_pass(app, [kind]) for _ in range(3)] == [{kind: 0}, {kind: 0}, {kind: 1}]
    assert [reply for _body, reply in robots[kind].attempts[:2]] == [REFUSALS[kind]["rate"]] * 2
    [row] = team_rows(kind)
    assert (row.status, row.attempts, len(robots[kind].texts)) == ("sent", 3, 1)
    if kind == "wecom":
        assert "45009" in str(robots[kind].attempts[0][1])


def test_a_message_is_given_up_after_the_retry_schedule(make_app, robots):
    robots["wecom"].fail_next(10)
    with built_app(make_app, **robot_settings(robots, REVIEW_WEBHOOK_RETRY_DELAYS="0,0")) as app:
        create_task(app.test_client(), AGENT, article_payload())
        for _ in range(4):
            send_pass(app, ["wecom"])
    [row] = team_rows("wecom")
    assert (row.status, row.attempts, robots["wecom"].texts) == ("gave_up", 3, [])
    assert "45009" in row.last_error


@pytest.mark.parametrize(
    "reply", [b"[" * 20_000 + b"]" * 20_000, b'{"errcode": NaN}', b'{"errcode": 1e400}', b'{"errmsg": "\\ud800"}']
)
def test_a_reply_the_strict_reader_refuses_is_a_failed_attempt_given_up_after_the_retries(make_app, robots, reply):
    """A 20,000-deep reply fits the 64 KiB a reply may take; json.loads raised RecursionError out of the pass, so
    the claimed message was never recorded and came back every claim period for ever (docs/api.md §15)."""
    robots["wecom"].fail_next(10, reply=reply)
    with built_app(make_app, **robot_settings(robots, REVIEW_WEBHOOK_RETRY_DELAYS="0,0")) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert [send_pass(app, ["wecom"]) for _ in range(4)] == [{"wecom": 0}] * 4
    [row] = team_rows("wecom")
    assert (row.status, row.attempts, robots["wecom"].texts) == ("gave_up", 3, [])
    assert len(robots["wecom"].attempts) == 3  # given up: not claimed again
    assert row.last_error.startswith("the robot's reply cannot be read as JSON ("), row.last_error


def test_back_from_rework_publish_failed_and_feedback_each_tell_the_team(make_app, robots):
    settings = robot_settings(robots, FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE="")
    with built_app(make_app, **settings) as app:
        client, admin = app.test_client(), app.test_client()
        create_admin()
        login(admin)
        cover = make_asset(app, 900, 500)
        task = create_task(client, AGENT, article_payload([cover["url"]]))
        rejected = admin.post(
            decision_url(task),
            json={"action": "reject_rework", "rejectionReason": "other", "rejectionNote": "全部重写"},
        )
        assert rejected.status_code == 200, rejected.get_json()
        patched = client.patch(patch_url(task), json={"title": "改好的标题"}, headers=AGENT)
        assert patched.get_json()["status"] == "pending_review", patched.get_json()
        selections = {
            "author": "硅基君",
            "title": "改好的标题",
            "summary": "一篇关于芯片的短文",
            "coverImage": {"assetId": cover["assetId"]},
            "body": task["candidates"]["bodyOptions"][0]["content"],
        }
        published = admin.post(decision_url(task), json={"action": "approve_and_publish", "selections": selections})
        assert published.get_json()["publishJobs"][0]["status"] == "failed"  # no platform credentials set
        feedback = client.post(
            "/api/feedbacks",
            headers=CLIENT,
            json={
                "appName": "芯片App",
                "appVersion": "1.0",
                "platform": "web",
                "type": "bug",
                "title": "闪退",
                "content": "打开就闪退",
            },
        ).get_json()
        assert [(row.event_type, row.payload.get("kind")) for row in team_rows("wecom")] == [
            ("task.awaiting_review", "created"),
            ("task.awaiting_review", "reworked"),
            ("task.publish_failed", None),
            ("feedback.received", None),
        ]
        assert send_pass(app, ["wecom"]) == {"wecom": 4}  # pending together: one digest
    [digest] = robots["wecom"].texts
    assert digest.startswith("**内容审核：4 条新通知**")
    assert "智能体已按退回意见修改（待审核）" in digest and "草稿生成失败：" in digest
    assert f"{PUBLIC_URL}/feedback/{feedback['id']}" in digest and "【芯片App】闪退" in digest
    assert f"收到新反馈 {feedback['feedbackNo']}（故障）" in digest  # the pages' word (docs/api.md §15)


def test_english_words_and_bare_paths_without_a_public_url(make_app, robots):
    settings = robot_settings(robots, REVIEW_DEFAULT_LANGUAGE="en", REVIEW_PUBLIC_URL="")
    with built_app(make_app, **settings) as app:
        task = create_task(app.test_client(), AGENT, article_payload())
        send_pass(app, ["feishu"])
    assert robots["feishu"].texts == [f"[silicon-rise] 芯片的未来\nNew task (Pending review)\n/review/{task['id']}"]


def test_notify_events_chooses_and_no_channel_writes_nothing(make_app, robots):
    with built_app(make_app, **robot_settings(robots, NOTIFY_EVENTS="feedback.received")) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert team_rows() == []
    with built_app(make_app) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert team_rows() == []


def test_team_messages_are_not_counted_as_the_agents_pending_webhooks(make_app, robots):
    settings = robot_settings(
        robots,
        METRICS_TOKEN="metrics-token",
        REVIEW_AGENT_WEBHOOK_URL="http://127.0.0.1:9/x",
        REVIEW_AGENT_WEBHOOK_EVENTS="review_task.rejected,review_task.approved",
    )
    with built_app(make_app, **settings) as app:
        create_task(app.test_client(), AGENT, article_payload())
        assert len(team_rows()) == 3
        metrics = app.test_client().get("/metrics", headers={"Authorization": "Bearer metrics-token"})
    assert "review_webhook_outbox_pending 0.0" in metrics.get_data(as_text=True)


@pytest.mark.parametrize("starttls", [False, True])
def test_email_through_a_real_smtp_server(make_app, tmp_path, monkeypatch, starttls):
    tls = self_signed(tmp_path) if starttls else None
    if tls:  # the service checks the certificate against the system's authorities: trust this one
        monkeypatch.setenv("SSL_CERT_FILE", str(tls[0]))
    with smtp_server(tls) as (mailbox, port):
        login = {"SMTP_USER": SMTP_USER, "SMTP_PASSWORD": SMTP_PASSWORD} if starttls else {"SMTP_FROM": SMTP_USER}
        settings = {
            "NOTIFY_EMAIL_TO": "editor@example.com, chief@example.com",
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": port,
            "SMTP_STARTTLS": starttls,
            "REVIEW_PUBLIC_URL": PUBLIC_URL,
            "REVIEW_DEFAULT_LANGUAGE": "zh-CN",
            **login,
        }
        with built_app(make_app, **settings) as app:
            task = create_task(app.test_client(), AGENT, article_payload())
            assert send_pass(app) == {"email": 1}
    [(sender, recipients, mail)] = mailbox.messages
    assert sender == SMTP_USER and recipients == ["editor@example.com", "chief@example.com"]
    assert mail["Subject"] == "【silicon-rise】芯片的未来：新任务（待审核）"
    assert f"{PUBLIC_URL}/review/{task['id']}" in mail.get_content()
    assert mailbox.logins == ([SMTP_USER] if starttls else [])


def test_starttls_refused_by_a_certificate_nobody_vouches_for_is_retried(make_app, tmp_path):
    with (
        smtp_server(self_signed(tmp_path)) as (mailbox, port),
        built_app(
            make_app,
            NOTIFY_EMAIL_TO="editor@example.com",
            SMTP_HOST="127.0.0.1",
            SMTP_PORT=port,
            SMTP_USER=SMTP_USER,
            SMTP_PASSWORD=SMTP_PASSWORD,
        ) as app,
    ):
        create_task(app.test_client(), AGENT, article_payload())
        assert send_pass(app) == {"email": 0}
    [row] = team_rows("email")
    assert row.status == "pending" and "SSLCertVerificationError" in row.last_error and mailbox.messages == []
    assert SMTP_PASSWORD not in row.last_error


def test_rows_of_a_channel_no_longer_configured_are_retired(make_app, robots):
    with built_app(make_app, **robot_settings(robots)) as app:
        create_task(app.test_client(), AGENT, article_payload())
    with built_app(make_app, NOTIFY_WECOM_WEBHOOK_URL=robots["wecom"].url) as app:
        with db.connection_context():
            assert retire(app.extensions["settings"].team) == 2
            assert {(r.channel, r.status) for r in OutboxMessage.select().where(OutboxMessage.channel != "agent")} == {
                ("wecom", "pending"),
                ("feishu", "not_sent"),
                ("dingtalk", "not_sent"),
            }


def test_a_deleted_tasks_unsent_team_messages_go_with_it(make_app, robots):
    with built_app(make_app, **robot_settings(robots)) as app:
        admin = app.test_client()
        create_admin()
        login(admin)
        task = create_task(app.test_client(), AGENT, article_payload())
        kept = create_task(app.test_client(), AGENT, article_payload(topic="另一个任务"))
        assert admin.delete(f"/api/review/tasks/{task['id']}").status_code == 200
        assert {row.task_id for row in team_rows()} == {kept["id"]}
        assert send_pass(app) == {"wecom": 1, "feishu": 1, "dingtalk": 1}
    assert all("另一个任务" in robot.texts[0] and "芯片的未来" not in robot.texts[0] for robot in robots.values())


def test_an_empty_notify_events_means_every_event(make_app, robots):
    with built_app(make_app, **robot_settings(robots, NOTIFY_EVENTS="")) as app:
        assert app.extensions["settings"].team.events == {
            "task.awaiting_review",
            "task.publish_failed",
            "feedback.received",
            "task.live",
            "task.live_failed",
            "edition.sent",
            "edition.failed",
        }
        create_task(app.test_client(), AGENT, article_payload())
        assert [row.event_type for row in team_rows("wecom")] == ["task.awaiting_review"]


def test_a_clients_markup_reaches_the_chat_as_text_not_as_a_link_or_mention(make_app, robots):
    settings = robot_settings(robots, FEEDBACK_RATE_LIMIT_PER_IP="", FEEDBACK_RATE_LIMIT_PER_DEVICE="")
    with built_app(make_app, **settings) as app:
        answer = app.test_client().post(
            "/api/feedbacks",
            headers=CLIENT,
            json={
                "appName": "App<@all>",
                "appVersion": "1.0",
                "platform": "web",
                "type": "bug",
                "title": "[请重新登录](https://phish.example) **急**",
                "content": "x",
            },
        )
        assert answer.status_code == 201, answer.get_json()
        send_pass(app, ["wecom", "dingtalk"])
    for kind in ("wecom", "dingtalk"):
        [markdown] = robots[kind].texts
        assert "](https://phish.example)" not in markdown and "<@all>" not in markdown and "**急**" not in markdown
        assert "请重新登录" in markdown and "phish.example" in markdown.replace("\u200b", "")  # the words stay readable


def test_a_mail_server_that_stalls_is_hung_up_on_before_the_claim_runs_out(make_app, monkeypatch):
    """Each SMTP step within its timeout, the whole past SMTP_DEADLINE: the attempt ends (and is
    retried) instead of outliving its claim, after which another process would send the mail too."""
    import asyncio

    from services.team import channels
    from tests.helpers.team import Mailbox

    class Stalling(Mailbox):
        async def handle_DATA(self, server, session, envelope):
            await asyncio.sleep(10)
            return await super().handle_DATA(server, session, envelope)

    monkeypatch.setattr(channels, "SMTP_DEADLINE", 0.5)
    with smtp_server(handler=Stalling()) as (mailbox, port):
        row, took = failed_mail(make_app, mail_settings(port))
    assert took < 5, took  # well before the stalling server would have answered (10 s)
    assert row.status == "pending" and row.attempts == 1 and row.last_error  # retried on the schedule


def test_dingtalks_signature_is_the_documented_hmac_url_encoded(monkeypatch):
    """A fixed vector, not the fake's round trip: Base64 of HMAC-SHA256 keyed with the secret over
    timestamp + "\\n" + secret, URL-encoded in the query (Base64 ends in "=": sent as %3D)."""
    import base64
    import hashlib
    import hmac
    from urllib.parse import quote_plus

    from services.settings.team import Robot
    from services.team import channels
    from services.team.messages import Message

    sent = []
    monkeypatch.setattr(channels.time, "time", lambda: 1_700_000_000.123)
    monkeypatch.setattr(channels, "_post", lambda url, body: (sent.append(url), ({"errcode": 0}, None))[1])
    secret = "SEC" + "0123456789abcdef" * 4
    assert (
        channels.dingtalk(Robot("https://oapi.dingtalk.com/robot/send?access_token=t", secret))(
            Message("s", "t", "m", 1)
        )
        is None
    )
    expected = base64.b64encode(
        hmac.new(secret.encode(), f"1700000000123\n{secret}".encode(), hashlib.sha256).digest()
    ).decode()
    assert sent == [
        f"https://oapi.dingtalk.com/robot/send?access_token=t&timestamp=1700000000123&sign={quote_plus(expected)}"
    ]
    assert "%3D" in sent[0]
