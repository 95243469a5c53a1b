"""Editions (docs/api.md §21): proposed by the agent, ordered, previewed and sent once by an editor; the result
by the platform's event or by polling; the tasks live through it; the agent and the team told."""
from datetime import UTC, datetime, timedelta

import pytest

from models import Edition, OutboxMessage, db
from services.editions.drafts import combined_draft
from services.platform.client import client_for
from tests.helpers.app import assert_error
from tests.helpers.editions import published_articles, wait_for_edition
from tests.helpers.publishing import ACCOUNTS, LIVE_AES_KEY, LIVE_TOKEN, go_live_url, published_article
from tests.helpers.review import (
    approve_image_post,
    article_payload,
    create_task,
    decision_url,
    image_post_payload,
    live_server,
    make_asset,
)
from tests.helpers.served import wait_until

pytestmark = pytest.mark.both_stores
APPID = ACCOUNTS["silicon-rise"][0]


def _outbox(event_type):
    with db.connection_context():
        return [m.payload for m in OutboxMessage.select().where(OutboxMessage.event_type == event_type)
                .order_by(OutboxMessage.id)]


def _propose(client, tasks, headers=None, account="silicon-rise"):
    answer = client.post("/api/editions", json={"account": account, "taskIds": [t["id"] for t in tasks]},
                         headers=headers or {})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def _send(admin_client, edition, **body):
    answer = admin_client.post(f"/api/editions/{edition['id']}/send", json=body)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()


def test_the_agent_proposes_an_editor_orders_previews_and_sends_it_once(app, client, admin_client, agent_headers,
                                                                       fake, served_url):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    proposed = _propose(client, tasks, agent_headers)
    assert (proposed["status"], proposed["createdBy"], proposed["taskIds"]) == ("draft", None, [t["id"] for t in tasks])
    assert proposed["articles"][0] == {"taskId": tasks[0]["id"], "index": 1, "articleUrl": None}
    # The editor puts the third first; the agent may read it but never send it.
    order = [tasks[2]["id"], tasks[0]["id"], tasks[1]["id"]]
    edited = admin_client.patch(f"/api/editions/{proposed['id']}", json={"taskIds": order}).get_json()
    assert edited["taskIds"] == order and edited["version"] == proposed["version"] + 1
    assert client.get(f"/api/editions/{proposed['id']}", headers=agent_headers).get_json()["taskIds"] == order
    assert_error(client.post(f"/api/editions/{proposed['id']}/send", json={}, headers=agent_headers), 401,
                 "unauthorized")
    # Preview: one combined draft of the three drafts, in order, to the editor's WeChat.
    previewed = admin_client.post(f"/api/editions/{proposed['id']}/preview", json={"wechatId": "editor_li"})
    assert previewed.status_code == 200, previewed.get_json()
    combined = fake.drafts[previewed.get_json()["draftMediaId"]]["articles"]
    assert [a["title"] for a in combined] == ["第3篇：芯片的未来", "第1篇：芯片的未来", "第2篇：芯片的未来"]
    own = fake.drafts[tasks[2]["publishJobs"][-1]["draftMediaId"]]["articles"][0]
    assert combined[0]["content"] == own["content"] and combined[0]["thumb_media_id"] == own["thumb_media_id"]
    assert fake.previews[-1]["towxname"] == "editor_li"
    # Send now: one sendall with the edition's id as clientmsgid; the event settles it.
    scheduled = _send(admin_client, proposed)
    assert scheduled["status"] in ("scheduled", "sending", "sent")
    sent = wait_for_edition(admin_client, proposed)
    assert sent["status"] == "sent", sent
    assert fake.sendall_calls == 1
    [call] = fake.requests_to("message/mass/sendall")
    assert call["json"]["clientmsgid"] == proposed["id"] and call["json"]["filter"] == {"is_to_all": True}
    [send] = fake.mass_sends.values()
    assert [a["title"] for a in send["articles"]] == [a["title"] for a in combined]
    assert (sent["msgId"], sent["msgDataId"]) == (str(send["msg_id"]), str(send["msg_data_id"]))
    wait_until(lambda: wait_for_edition(admin_client, proposed)["counts"], 10, "no counts from the event")
    sent = admin_client.get(f"/api/editions/{proposed['id']}").get_json()
    counts = send["counts"]
    assert sent["counts"] == {"total": counts["TotalCount"], "filter": counts["FilterCount"],
                              "sent": counts["SentCount"], "error": counts["ErrorCount"]}
    assert [a["articleUrl"] for a in sent["articles"]] == send["article_urls"]
    # Each task is live through the edition, with its own address.
    for index, task_id in enumerate(order):
        live = admin_client.get(f"/api/review/tasks/{task_id}").get_json()
        assert live["live"]["status"] == "live" and live["live"]["via"] == "mass_send"
        assert live["live"]["editionId"] == proposed["id"]
        assert live["live"]["articleUrl"] == send["article_urls"][index]
        assert [e["type"] for e in live["timeline"]][-2:] == ["edition_scheduled", "edition_sent"]
    # The agent hears each task; the team hears the edition once, titles in order.
    webhooks = _outbox("review_task.live")
    assert [w["data"]["taskId"] for w in webhooks] == order
    assert {(w["data"]["via"], w["data"]["editionId"]) for w in webhooks} == {("mass_send", proposed["id"])}
    [told] = _outbox("edition.sent")
    assert told["titles"] == [a["title"] for a in combined] and told["account"] == "silicon-rise"


def test_polling_settles_it_when_no_event_comes_and_a_late_event_adds_the_counts(app, admin_client, agent_headers,
                                                                                fake, served_url):
    fake.withhold_events = True
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    _send(admin_client, edition)
    sent = wait_for_edition(admin_client, edition)
    assert (sent["status"], sent["counts"]) == ("sent", None)
    assert fake.requests_to("message/mass/get")
    msg_id = int(sent["msgId"])
    assert fake.push_mass_event(msg_id) == (200, "success")
    later = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    assert later["counts"]["total"] == fake.mass_sends[msg_id]["counts"]["TotalCount"]
    assert [a["articleUrl"] for a in later["articles"]] == fake.mass_sends[msg_id]["article_urls"]
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][1]}").get_json()
    assert task["live"]["articleUrl"] == fake.mass_sends[msg_id]["article_urls"][1]
    # The same event again (a new nonce) changes nothing more.
    version = later["version"]
    assert fake.push_mass_event(msg_id) == (200, "success")
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["version"] == version


@pytest.mark.parametrize(("status", "words"), [("err(20001)", "political"), ("err(10001)", "advertising"),
                                               ("err(20013)", "copyright"), ("send fail", "send failed")])
def test_the_platforms_err_codes_fail_it_in_words(app, admin_client, agent_headers, fake, served_url, status, words):
    fake.finish_next_mass_with(status)
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    _send(admin_client, edition)
    failed = wait_for_edition(admin_client, edition)
    assert failed["status"] == "failed" and words in failed["failReason"], failed
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][0]}").get_json()
    assert task["live"] is None and task["timeline"][-1]["type"] == "edition_failed"
    [told] = _outbox("edition.failed")
    assert told["reasonCode"] in (status, "send_fail")


@pytest.mark.parametrize(("errcode", "words"), [
    (45028, "no mass-send quota is left"), (48001, "only verified accounts"), (40007, "40007")])
def test_a_refused_sendall_fails_it_with_the_reason(app, admin_client, agent_headers, fake, served_url, errcode,
                                                    words):
    fake.fail_next_sendall(errcode)
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    _send(admin_client, edition)
    failed = wait_for_edition(admin_client, edition)
    assert failed["status"] == "failed" and words in failed["failReason"], failed
    assert fake.mass_sends == {}


def test_45066_waits_a_minute_and_sends_once(app, admin_client, agent_headers, fake, served_url):
    fake.fail_next_sendall(45066)
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    _send(admin_client, edition)
    wait_until(lambda: fake.sendall_calls == 1, 10, "no sendall")
    with db.connection_context():
        wait_until(lambda: Edition.get(Edition.edition_id == edition["id"]).owner is None, 10, "still claimed")
        row = Edition.get(Edition.edition_id == edition["id"])
        assert row.status == "sending" and row.msg_id is None
        wait_at = datetime.fromisoformat(row.next_at.replace("Z", "+00:00"))
        assert timedelta(seconds=50) < wait_at - datetime.now(UTC) <= timedelta(seconds=60)
        Edition.update(next_at=row.updated_at).where(Edition.id == row.id).execute()  # the minute has passed
    assert wait_for_edition(admin_client, edition)["status"] == "sent"
    assert fake.sendall_calls == 2 and len(fake.mass_sends) == 1


def test_a_repeated_send_the_platform_already_took_counts_as_sent(app, admin_client, agent_headers, fake,
                                                                 served_url):
    """As if a process had called sendall and stopped before it recorded the answer: the repeat, with the
    same clientmsgid, is answered 45065 with the first msg_id, and followers get one message."""
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    with app.app_context(), db.connection_context():
        client = client_for("silicon-rise", app.extensions["settings"])
        first = client.mass_send(combined_draft(client, edition["taskIds"]), edition["id"], None, False)
    _send(admin_client, edition)
    sent = wait_for_edition(admin_client, edition)
    assert sent["status"] == "sent" and sent["msgId"] == first["msg_id"]
    assert fake.sendall_calls == 2 and len(fake.mass_sends) == 1


def test_sending_to_a_tag_and_the_tags(app, admin_client, agent_headers, fake, served_url):
    tags = admin_client.get("/api/editions/tags?account=silicon-rise").get_json()["tags"]
    assert {"id": 100, "name": "早读会员", "count": 326} in tags
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    _send(admin_client, edition, tagId=100, ignoreReprint=True)
    assert wait_for_edition(admin_client, edition)["status"] == "sent"
    [call] = fake.requests_to("message/mass/sendall")
    assert call["json"]["filter"] == {"is_to_all": False, "tag_id": 100} and call["json"]["send_ignore_reprint"] == 1


def test_the_quota_is_kept_before_the_platform_is_asked(app, admin_client, agent_headers, fake):
    """1/day (the default): a second edition the same day is refused naming the next day's start; another
    day is fine; a canceled one frees its place."""
    tasks = published_articles(app, admin_client, agent_headers, 3)
    first, second, third = (_propose(admin_client, [task]) for task in tasks)
    at = datetime.now(UTC) + timedelta(days=2)
    _send(admin_client, first, at=at.isoformat())
    refused = admin_client.post(f"/api/editions/{second['id']}/send", json={"at": (at + timedelta(minutes=1))
                                                                            .isoformat()})
    assert_error(refused, 409, "quota_exceeded")
    zone = app.extensions["settings"].time_zone
    next_day = (at.astimezone(zone) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    assert refused.get_json()["error"]["details"]["nextPossibleAt"] == [
        next_day.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")]
    assert "1/day" in str(refused.get_json()["error"]["details"]["quota"])
    assert admin_client.get(f"/api/editions/{second['id']}").get_json()["status"] == "draft"
    _send(admin_client, second, at=(next_day + timedelta(hours=8)).isoformat())  # the next day: fine
    assert admin_client.delete(f"/api/editions/{first['id']}/send").get_json()["status"] == "canceled"
    _send(admin_client, third, at=at.isoformat())  # the canceled one's place
    assert fake.requests_to("message/mass/sendall") == []


@pytest.mark.parametrize("edition_settings", [{"WECHAT_SILICON_RISE_MASS_QUOTA": "2/month"}], indirect=True)
def test_a_monthly_quota_counts_the_month(app, admin_client, agent_headers, fake):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    editions = [_propose(admin_client, [task]) for task in tasks]
    zone = app.extensions["settings"].time_zone
    now = datetime.now(zone)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (start + timedelta(days=32)).replace(day=1)
    soon = min(now + timedelta(hours=1), following - timedelta(minutes=2))
    for edition in editions[:2]:
        _send(admin_client, edition, at=max(soon, now + timedelta(minutes=1)).isoformat())
    refused = admin_client.post(f"/api/editions/{editions[2]['id']}/send", json={"at": soon.isoformat()})
    assert_error(refused, 409, "quota_exceeded")
    assert refused.get_json()["error"]["details"]["nextPossibleAt"] == [
        following.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")]


def test_what_cannot_go_in_an_edition_is_named(app, client, admin_client, agent_headers, fake, served_url):
    published = published_articles(app, admin_client, agent_headers, 2)
    other = published_articles(app, admin_client, agent_headers, 1, account="carbon-fitness")[0]
    pending = create_task(admin_client, agent_headers, article_payload())
    images = [make_asset(app, 600, 800) for _ in range(2)]
    post = create_task(admin_client, agent_headers, image_post_payload(images, publicAccount="silicon-rise"))
    admin_client.post(decision_url(post), json=approve_image_post(images, action="approve_and_publish"))
    held = _propose(admin_client, [published[1]])
    alone = published_article(app, admin_client, agent_headers)
    fake.withhold_events = True
    assert admin_client.post(go_live_url(alone), json={"at": (datetime.now(UTC) + timedelta(days=1)).isoformat()}
                             ).status_code == 202
    answer = admin_client.post("/api/editions", json={"account": "silicon-rise", "taskIds": [
        published[0]["id"], other["id"], pending["id"], post["id"], published[1]["id"], alone["id"], "nope"]})
    assert_error(answer, 409, "invalid_state")
    details = answer.get_json()["error"]["details"]
    assert set(details) == {other["id"], pending["id"], post["id"], published[1]["id"], alone["id"], "nope"}
    assert "carbon-fitness" in details[other["id"]][0] and "image post" in details[post["id"]][0]
    assert held["id"] in details[published[1]["id"]][0] and "going live" in details[alone["id"]][0]
    assert "pending_review" in details[pending["id"]][0] and "no such task" in details["nope"][0]
    # Shape: 1 to 8 distinct tasks of a known account.
    for body in ({"account": "silicon-rise", "taskIds": []}, {"account": "silicon-rise", "taskIds": ["a"] * 2},
                 {"account": "silicon-rise", "taskIds": [f"t{i}" for i in range(9)]},
                 {"account": "moon", "taskIds": ["a"]}, {"taskIds": ["a"]}):
        assert_error(admin_client.post("/api/editions", json=body), 400, "validation_error")
    # Only a draft changes; a sent one is never deleted; a client token is nobody here.
    _send(admin_client, held)
    assert wait_for_edition(admin_client, held, seconds=20)["status"] == "sent"
    assert_error(admin_client.patch(f"/api/editions/{held['id']}", json={"taskIds": [published[0]["id"]]}), 409,
                 "invalid_state")
    assert_error(admin_client.delete(f"/api/editions/{held['id']}"), 409, "invalid_state")
    assert_error(admin_client.delete(f"/api/editions/{held['id']}/send"), 409, "invalid_state")
    assert_error(client.get("/api/editions", headers={"x-feedback-client-token": "web-token"}), 401, "unauthorized")
    draft = _propose(client, [published[0]], agent_headers)
    assert_error(client.delete(f"/api/editions/{draft['id']}", headers=agent_headers), 401, "unauthorized")
    assert admin_client.delete(f"/api/editions/{draft['id']}").status_code == 204
    assert_error(admin_client.get(f"/api/editions/{draft['id']}"), 404, "not_found")
    listed = admin_client.get("/api/editions?account=silicon-rise&status=sent").get_json()
    assert [e["id"] for e in listed] == [held["id"]]


def test_a_forged_or_replayed_mass_event_changes_nothing(app, admin_client, agent_headers, fake, served_url):
    fake.withhold_events = True
    fake.mass_seconds = 3600  # it stays sending
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    _send(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["msgId"], 10, "no msg_id")
    current = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    target = {"url": f"{served_url}/wechat/silicon-rise/events", "token": LIVE_TOKEN, "aes_key": LIVE_AES_KEY,
              "mode": "aes"}
    forged = {**target, "token": "not-the-token"}
    assert fake.push_mass_event(int(current["msgId"]), forged, status="err(20001)")[0] == 403
    plain = {**target, "mode": "plain"}  # an account with a key takes safe mode only
    assert fake.push_mass_event(int(current["msgId"]), plain, status="err(20001)")[0] == 403
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["version"] == current["version"]
    # carbon-fitness has no server URL here; silicon-rise's own event with another msg_id changes nothing.
    assert fake.push_mass_event(int(current["msgId"]), target, status="send success") == (200, "success")
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["status"] == "sent"


def test_readers_figures_land_on_each_article_of_the_edition(app, admin_client, agent_headers, fake, served_url):
    """The platform's figures of a mass send are per article, msgid <msg_data_id>_<index> (docs/api.md §19)."""
    edition = _propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    _send(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["counts"], 15, "not sent")
    send = next(iter(fake.mass_sends.values()))
    day = datetime.now(app.extensions["settings"].time_zone).date().isoformat()
    for reads, article_id in zip((70, 30), send["article_ids"], strict=True):
        fake.day_figures[(article_id, day)] = {"read_user": reads}
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day, "--account", "silicon-rise"])
    assert result.exit_code == 0 and "stored 2" in result.output, result.output
    reads = [admin_client.get(f"/api/review/tasks/{task_id}/stats").get_json()["days"][0]["readUser"]
             for task_id in edition["taskIds"]]
    assert reads == [70, 30]


def test_the_agent_proposes_and_reads_an_edition_over_mcp(app, admin_client, agent_headers, fake):
    from mcp import Client

    from tests.helpers.mcp import call, run, stdio_params

    tasks = published_articles(app, admin_client, agent_headers, 2)
    with live_server(app) as base_url:
        async def agent_side():
            async with Client(stdio_params(base_url, token=agent_headers["x-review-agent-token"])) as client:
                failed, edition = await call(client, "propose_edition",
                                             {"account": "silicon-rise", "taskIds": [t["id"] for t in tasks]})
                assert not failed and edition["status"] == "draft", edition
                failed, again = await call(client, "propose_edition",
                                           {"account": "silicon-rise", "taskIds": [tasks[0]["id"]]})
                assert failed and "is in edition" in str(again), again  # the refusal names the task and why
                failed, read = await call(client, "get_edition", {"editionId": edition["id"]})
                return read

        read = run(agent_side())
    assert read["taskIds"] == [t["id"] for t in tasks] and read["createdBy"] is None


def test_deleting_a_task_leaves_a_draft_edition_and_waits_for_a_scheduled_one(app, admin_client, agent_headers, fake):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    draft = _propose(admin_client, tasks[:2])
    scheduled = _propose(admin_client, tasks[2:])
    _send(admin_client, scheduled, at=(datetime.now(UTC) + timedelta(days=1)).isoformat())
    assert admin_client.delete(f"/api/review/tasks/{tasks[0]['id']}").status_code == 200
    assert admin_client.get(f"/api/editions/{draft['id']}").get_json()["taskIds"] == [tasks[1]["id"]]
    assert_error(admin_client.delete(f"/api/review/tasks/{tasks[2]['id']}"), 409, "invalid_state")
    assert admin_client.get(f"/api/review/tasks/{tasks[2]['id']}").status_code == 200
    admin_client.delete(f"/api/editions/{scheduled['id']}/send")
    assert admin_client.delete(f"/api/review/tasks/{tasks[2]['id']}").status_code == 200
    assert admin_client.delete(f"/api/review/tasks/{tasks[1]['id']}").status_code == 200
    assert_error(admin_client.get(f"/api/editions/{draft['id']}"), 404, "not_found")  # nothing was left in it


def test_every_err_code_of_the_platform_has_its_meaning_in_both_languages(app):
    from flask_babel import force_locale

    from rules.labels import LOCALES, edition_failure

    meanings = {10001: "advertising", 20001: "political", 20002: "pornographic", 20004: "society", 20006: "criminal",
                20008: "fraud", 20013: "copyright", 21000: "other reasons", 22000: "mutual promotion"}
    with app.test_request_context():
        for code, word in meanings.items():
            with force_locale("en"):
                assert word in edition_failure(f"err({code})") and str(code) in edition_failure(f"err({code})")
            with force_locale(LOCALES["zh-CN"]):
                chinese = edition_failure(f"err({code})")
                assert str(code) in chinese and word not in chinese, chinese
