"""Editions (docs/api.md §21): proposed by the agent, ordered, previewed and sent once by an editor; the result
by the platform's event or by polling; the tasks live through it; the agent and the team told."""

from datetime import UTC, datetime, timedelta

import pytest

from fakeplatform.masssend import SENDALL_PATH
from models import EarlyMassEvent, Edition, db
from services.editions import failure_words
from services.editions.drafts import combined_draft
from services.platform.client import client_for
from tests.helpers.app import assert_error, built_app
from tests.helpers.editions import outbox, propose, published_articles, send_edition, wait_for_edition
from tests.helpers.publishing import ACCOUNTS, went_live_days_ago
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores
APPID = ACCOUNTS["silicon-rise"][0]


def shown(urls):
    """The addresses as the service shows them: MASSSENDJOBFINISH writes them in plain http, as the platform
    does, and they are kept as https (docs/api.md §18, §21)."""
    assert all(url.startswith("http://mp.weixin.qq.com/s/") for url in urls), urls
    return ["https://" + url.removeprefix("http://") for url in urls]


def test_the_agent_proposes_an_editor_orders_previews_and_sends_it_once(
    app, client, admin_client, agent_headers, fake, served_url
):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    proposed = propose(client, tasks, agent_headers)
    assert (proposed["status"], proposed["createdBy"], proposed["taskIds"]) == ("draft", None, [t["id"] for t in tasks])
    assert proposed["articles"][0] == {"taskId": tasks[0]["id"], "index": 1, "articleUrl": None}
    # The editor puts the third first; the agent may read it but never send it.
    order = [tasks[2]["id"], tasks[0]["id"], tasks[1]["id"]]
    edited = admin_client.patch(f"/api/editions/{proposed['id']}", json={"taskIds": order}).get_json()
    assert edited["taskIds"] == order and edited["version"] == proposed["version"] + 1
    assert client.get(f"/api/editions/{proposed['id']}", headers=agent_headers).get_json()["taskIds"] == order
    assert_error(
        client.post(f"/api/editions/{proposed['id']}/send", json={}, headers=agent_headers), 401, "unauthorized"
    )
    # Preview: one combined draft of the three drafts, in order, to the editor's WeChat.
    previewed = admin_client.post(f"/api/editions/{proposed['id']}/preview", json={"wechatId": "editor_li"})
    assert previewed.status_code == 200, previewed.get_json()
    combined = fake.drafts[previewed.get_json()["draftMediaId"]]["articles"]
    assert [a["title"] for a in combined] == ["第3篇：芯片的未来", "第1篇：芯片的未来", "第2篇：芯片的未来"]
    own = fake.drafts[tasks[2]["publishJobs"][-1]["draftMediaId"]]["articles"][0]
    assert combined[0]["content"] == own["content"] and combined[0]["thumb_media_id"] == own["thumb_media_id"]
    assert fake.previews[-1]["towxname"] == "editor_li"
    # Send now: one sendall with the edition's id as clientmsgid; the event settles it.
    scheduled = send_edition(admin_client, proposed)
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
    assert sent["counts"] == {
        "total": counts["TotalCount"],
        "filter": counts["FilterCount"],
        "sent": counts["SentCount"],
        "error": counts["ErrorCount"],
    }
    assert [a["articleUrl"] for a in sent["articles"]] == shown(send["article_urls"])
    # Each task is live through the edition, with its own address.
    for index, task_id in enumerate(order):
        live = admin_client.get(f"/api/review/tasks/{task_id}").get_json()
        assert live["live"]["status"] == "live" and live["live"]["via"] == "mass_send"
        assert live["live"]["editionId"] == proposed["id"]
        assert live["live"]["articleUrl"] == shown(send["article_urls"])[index]
        assert [e["type"] for e in live["timeline"]][-2:] == ["edition_scheduled", "edition_sent"]
    # The agent hears each task; the team hears the edition once, titles in order.
    # A poll that found the send done before the event came (a loaded machine) told them without the address:
    # they hear it again once the event brings it. The last word for each task carries it.
    webhooks = outbox("review_task.live")
    assert [w["data"]["taskId"] for w in webhooks[:3]] == order and len(webhooks) in (3, 6), webhooks
    last = {w["data"]["taskId"]: w["data"]["articleUrl"] for w in webhooks}
    assert [last[task_id] for task_id in order] == shown(send["article_urls"])
    assert {(w["data"]["via"], w["data"]["editionId"]) for w in webhooks} == {("mass_send", proposed["id"])}
    [told] = outbox("edition.sent")
    assert told["titles"] == [a["title"] for a in combined] and told["account"] == "silicon-rise"


def test_polling_settles_it_when_no_event_comes_and_a_late_event_adds_the_counts(
    app, admin_client, agent_headers, fake, served_url
):
    fake.withhold_events = True
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    send_edition(admin_client, edition)
    sent = wait_for_edition(admin_client, edition)
    assert (sent["status"], sent["counts"]) == ("sent", None)
    assert fake.requests_to("message/mass/get")
    msg_id = int(sent["msgId"])
    assert fake.push_mass_event(msg_id) == (200, "success")
    later = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    assert later["counts"]["total"] == fake.mass_sends[msg_id]["counts"]["TotalCount"]
    assert [a["articleUrl"] for a in later["articles"]] == shown(fake.mass_sends[msg_id]["article_urls"])
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][1]}").get_json()
    assert task["live"]["articleUrl"] == shown(fake.mass_sends[msg_id]["article_urls"])[1]
    # The agent heard each task go live without its address (a poll gives none), then again with it.
    told = [(w["data"]["taskId"], w["data"]["articleUrl"]) for w in outbox("review_task.live")]
    assert told == [(task_id, None) for task_id in edition["taskIds"]] + list(
        zip(edition["taskIds"], shown(fake.mass_sends[msg_id]["article_urls"]), strict=True)
    ), told
    # The same event again (a new nonce) changes nothing more.
    version = later["version"]
    assert fake.push_mass_event(msg_id) == (200, "success")
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["version"] == version


@pytest.mark.parametrize("edition_settings", [{"WECHAT_TIMEOUT_SECONDS": 30}], indirect=True)
def test_an_event_that_comes_before_the_sendall_answer_is_kept_for_it(
    app, admin_client, agent_headers, fake, served_url
):
    """The platform may report the send before its sendall answer reaches the service (a loaded machine, a
    slow network): the event is kept until the answer names its msg_id, so the counts and addresses, which
    message/mass/get never gives, are not lost."""
    fake.hold_sendall()  # the send is made and reported at once; its answer waits for the checks below
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    send_edition(admin_client, edition)
    wait_until(lambda: fake.mass_event_answers, 10, "no event pushed")
    assert [answer[1:] for answer in fake.mass_event_answers] == [(200, "success")]
    with db.connection_context():
        assert Edition.get(Edition.edition_id == edition["id"]).msg_id is None  # the answer is still to come
    [early_id] = fake.mass_sends
    assert fake.push_mass_event(early_id) == (200, "success")  # the platform's repeat (a new nonce) keeps one
    with db.connection_context():
        assert EarlyMassEvent.select().count() == 1
    fake.release_sendall()
    sent = wait_for_edition(admin_client, edition, seconds=30)
    [send] = fake.mass_sends.values()
    assert (sent["status"], sent["msgId"]) == ("sent", str(send["msg_id"]))
    assert sent["counts"] == {
        "total": send["counts"]["TotalCount"],
        "filter": send["counts"]["FilterCount"],
        "sent": send["counts"]["SentCount"],
        "error": send["counts"]["ErrorCount"],
    }
    assert [a["articleUrl"] for a in sent["articles"]] == shown(send["article_urls"])
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][1]}").get_json()
    assert task["live"]["articleUrl"] == shown(send["article_urls"])[1]
    with db.connection_context():
        assert EarlyMassEvent.select().count() == 0  # used, then gone
    # An event no send in flight can claim is not kept: only the platform signs them, yet nothing piles up.
    fake.reset_mass_quota()
    with app.app_context(), db.connection_context():
        client = client_for("silicon-rise", app.extensions["settings"])
        client.mass_send(combined_draft(client, edition["taskIds"]), "not-an-edition", None, False)
    wait_until(lambda: len(fake.mass_event_answers) == 2, 10, "no second event")
    assert fake.mass_event_answers[1][1:] == (200, "success")
    with db.connection_context():
        assert EarlyMassEvent.select().count() == 0


def test_a_repeat_answered_45065_takes_the_event_the_lost_answer_left(
    app, admin_client, agent_headers, fake, served_url
):
    """The first sendall's answer is lost (past WECHAT_TIMEOUT_SECONDS, 5 s here) while the platform reports
    the send at once; the repeat a minute later is answered 45065 with the msg_id, and the kept event settles it."""
    fake.sendall_delay = 8
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    send_edition(admin_client, edition)
    wait_until(lambda: fake.mass_event_answers, 10, "no event pushed")
    with db.connection_context():
        wait_until(lambda: Edition.get(Edition.edition_id == edition["id"]).owner is None, 15, "still claimed")
        row = Edition.get(Edition.edition_id == edition["id"])
        assert (row.status, row.msg_id, EarlyMassEvent.select().count()) == ("sending", None, 1)
        fake.sendall_delay = 0
        Edition.update(next_at=row.updated_at).where(Edition.id == row.id).execute()  # the minute has passed
    sent = wait_for_edition(admin_client, edition)
    [send] = fake.mass_sends.values()
    assert (sent["status"], sent["msgId"], fake.sendall_calls) == ("sent", str(send["msg_id"]), 2)
    assert sent["counts"]["total"] == send["counts"]["TotalCount"]
    assert [a["articleUrl"] for a in sent["articles"]] == shown(send["article_urls"])


@pytest.mark.parametrize("errcode", [40007, 45028])
def test_a_repeat_refused_says_the_first_try_may_have_gone_out(app, admin_client, agent_headers, fake, errcode):
    """The first sendall got no answer a person can trust (a proxy's 502); the repeat is refused 40007 (its
    draft gone: the platform removes a sent one) or 45028 (the day's send spent). Either may be the first
    try's doing: the old edition failed as "refused", its articles said free again, and an editor sending
    them again would have reached followers twice."""
    fake.fail_next(SENDALL_PATH, status=502, body="bad gateway")
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    wait_until(lambda: fake.sendall_calls == 1, 10, "no sendall")
    with db.connection_context():
        wait_until(lambda: Edition.get(Edition.edition_id == edition["id"]).owner is None, 10, "still claimed")
        fake.fail_next_sendall(errcode)
        row = Edition.get(Edition.edition_id == edition["id"])
        Edition.update(next_at=row.updated_at).where(Edition.id == row.id).execute()  # the minute has passed
    failed = wait_for_edition(admin_client, edition)
    assert failed["status"] == "failed" and fake.sendall_calls == 2, failed
    assert "check the back office's sent messages" in failed["failReason"], failed["failReason"]
    with app.test_request_context(), db.connection_context():
        assert failure_words(edition["id"])[1] is False  # not "its articles are free again"


def test_a_refused_token_none_can_replace_waits_a_minute_and_sends_once(app, admin_client, agent_headers, fake):
    """sendall refused the token (42001) and stable_token then failed: nothing was sent, so the send is tried
    again in a minute, never failed as refused."""
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    fake.fail_next_sendall(42001)
    fake.fail_next("stable_token", status=502, body="bad gateway")
    send_edition(admin_client, edition)
    wait_until(lambda: fake.sendall_calls == 1, 10, "no sendall")
    with db.connection_context():
        wait_until(lambda: Edition.get(Edition.edition_id == edition["id"]).owner is None, 10, "still claimed")
        row = Edition.get(Edition.edition_id == edition["id"])
        assert (row.status, row.msg_id) == ("sending", None), (row.status, row.fail_reason)
        Edition.update(next_at=row.updated_at).where(Edition.id == row.id).execute()  # the minute has passed
    assert wait_for_edition(admin_client, edition)["status"] == "sent"
    assert fake.sendall_calls == 2 and len(fake.mass_sends) == 1


def test_45066_waits_a_minute_and_sends_once(app, admin_client, agent_headers, fake, served_url):
    fake.fail_next_sendall(45066)
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
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


def test_a_repeated_send_the_platform_already_took_counts_as_sent(app, admin_client, agent_headers, fake, served_url):
    """As if a process had called sendall and stopped before it recorded the answer: the repeat, with the
    same clientmsgid, is answered 45065 with the first msg_id, and followers get one message."""
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    with app.app_context(), db.connection_context():
        client = client_for("silicon-rise", app.extensions["settings"])
        first = client.mass_send(combined_draft(client, edition["taskIds"]), edition["id"], None, False)
    send_edition(admin_client, edition)
    sent = wait_for_edition(admin_client, edition)
    assert sent["status"] == "sent" and sent["msgId"] == first["msg_id"]
    assert fake.sendall_calls == 2 and len(fake.mass_sends) == 1


def test_the_quota_is_kept_before_the_platform_is_asked(app, admin_client, agent_headers, fake):
    """1/day (the default): a second edition the same day is refused naming the next day's start; another
    day is fine; a canceled one frees its place."""
    tasks = published_articles(app, admin_client, agent_headers, 3)
    first, second, third = (propose(admin_client, [task]) for task in tasks)
    at = datetime.now(UTC) + timedelta(days=2)
    send_edition(admin_client, first, at=at.isoformat())
    refused = admin_client.post(
        f"/api/editions/{second['id']}/send", json={"at": (at + timedelta(minutes=1)).isoformat()}
    )
    assert_error(refused, 409, "quota_exceeded")
    zone = app.extensions["settings"].time_zone
    next_day = (at.astimezone(zone) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    assert refused.get_json()["error"]["details"]["nextPossibleAt"] == [
        next_day.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    ]
    assert "1/day" in str(refused.get_json()["error"]["details"]["quota"])
    assert admin_client.get(f"/api/editions/{second['id']}").get_json()["status"] == "draft"
    send_edition(admin_client, second, at=(next_day + timedelta(hours=8)).isoformat())  # the next day: fine
    assert admin_client.delete(f"/api/editions/{first['id']}/send").get_json()["status"] == "canceled"
    send_edition(admin_client, third, at=at.isoformat())  # the canceled one's place
    assert fake.requests_to("message/mass/sendall") == []


def test_readers_figures_land_on_each_article_of_the_edition(app, admin_client, agent_headers, fake, served_url):
    """The platform's figures of a mass send are per article, msgid <msg_data_id>_<index> (docs/api.md §19)."""
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    send_edition(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["counts"], 15, "not sent")
    send = next(iter(fake.mass_sends.values()))
    for task_id in edition["taskIds"]:  # sent yesterday: the platform's figures end yesterday
        went_live_days_ago(task_id, 1, fake)
    day = (datetime.now(app.extensions["settings"].time_zone).date() - timedelta(days=1)).isoformat()
    for reads, article_id in zip((70, 30), send["article_ids"], strict=True):
        fake.day_figures[(article_id, day)] = {"read_user": reads}
    result = app.test_cli_runner().invoke(args=["fetch-stats", "--date", day, "--account", "silicon-rise"])
    assert result.exit_code == 0 and "stored 2" in result.output, result.output
    reads = [
        admin_client.get(f"/api/review/tasks/{task_id}/stats").get_json()["days"][0]["readUser"]
        for task_id in edition["taskIds"]
    ]
    assert reads == [70, 30]


def test_a_send_whose_credentials_are_gone_fails_saying_nothing_was_sent(
    app, client, admin_client, agent_headers, fake, make_app, edition_settings
):
    """The service started again without the account's credentials before a scheduled edition's time: it
    fails once, saying nothing reached the platform (its articles free again), instead of being taken
    again every lease with no end."""
    tasks = published_articles(app, admin_client, agent_headers, 2)
    edition = propose(client, tasks, agent_headers)
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    send_edition(admin_client, edition, at=later)
    without = {key: value for key, value in edition_settings.items() if not key.startswith("WECHAT_SILICON_RISE_")}
    with built_app(make_app, **without):
        with db.connection_context():
            Edition.update(send_at=Edition.created_at).execute()  # its time has come
        wait_until(
            lambda: Edition.get(Edition.edition_id == edition["id"]).status == "failed", 15, "the edition not failed"
        )
        with db.connection_context():
            row = Edition.get(Edition.edition_id == edition["id"])
    assert (row.fail_code, row.attempts, row.owner) == ("not_sent", 1, None)
    assert "no platform credentials" in row.fail_reason and "nothing was sent" in row.fail_reason
    assert fake.sendall_calls == 0
