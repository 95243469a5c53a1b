"""Editions (docs/api.md §21), the rules that do not depend on the store: what cannot go in one and why, the
platform's refusals and err(N) in words, the monthly quota, tags, forged events, deleting a task, MCP."""

from datetime import UTC, datetime, timedelta

import pytest

from fakeplatform.freepublish import signed_push
from models import Edition, db
from models.live import TaskLive
from rules.ids import iso, utcnow
from tests.helpers.app import assert_error
from tests.helpers.editions import outbox, propose, published_articles, send_edition, wait_for_edition
from tests.helpers.publishing import (
    ACCOUNTS,
    LIVE_AES_KEY,
    LIVE_TOKEN,
    go_live_url,
    published_article,
    wait_for_live,
)
from tests.helpers.review import (
    approve_image_post,
    article_payload,
    create_task,
    decision_url,
    image_post_payload,
    live_server,
    make_asset,
)
from tests.helpers.waiting import wait_until

APPID = ACCOUNTS["silicon-rise"][0]


# The poll waits: a mass/get answered SEND_FAIL before the event lands would give the plain "send failed".
@pytest.mark.parametrize("edition_settings", [{"WECHAT_PUBLISH_POLL_DELAYS": "60"}], indirect=True)
@pytest.mark.parametrize(
    ("status", "words"),
    [
        ("err(20001)", "political"),
        ("err(10001)", "advertising"),
        ("err(20013)", "copyright"),
        ("err(30003)", "reprint"),  # the sample's (fakeplatform/samples/MASSSENDJOBFINISH.xml)
        ("err(40002)", "within 30 minutes"),  # mass-send protection: nobody confirmed it in time
        ("send fail", "send failed"),
    ],
)
def test_the_platforms_err_codes_fail_it_in_words(app, admin_client, agent_headers, fake, served_url, status, words):
    fake.finish_next_mass_with(status)
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    failed = wait_for_edition(admin_client, edition)
    assert failed["status"] == "failed" and words in failed["failReason"], failed
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][0]}").get_json()
    assert task["live"] is None and task["timeline"][-1]["type"] == "edition_failed"
    [told] = outbox("edition.failed")
    assert told["reasonCode"] in (status, "send_fail")


@pytest.mark.parametrize("edition_settings", [{"WECHAT_PUBLISH_POLL_DELAYS": "60"}], indirect=True)
def test_the_documents_sendsuccess_without_a_space_is_a_success(app, admin_client, agent_headers, fake, served_url):
    """Captured events write "send success", the documents' example "sendsuccess": both are the send done."""
    fake.withhold_events = True
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    msg_id = wait_until(
        lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["msgId"], 20, "the sendall"
    )
    wait_until(lambda: fake.mass_sends[int(msg_id)]["status"] == "SEND_SUCCESS", 20, "the fake's send")
    assert fake.push_mass_event(int(msg_id), status="sendsuccess") == (200, "success")
    sent = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    assert sent["status"] == "sent", sent


def test_a_failure_a_poll_found_takes_the_events_reason_when_it_comes(
    app, admin_client, agent_headers, fake, served_url
):
    fake.withhold_events = True
    fake.finish_next_mass_with("err(20001)")
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    failed = wait_for_edition(admin_client, edition)
    assert (failed["status"], failed["failReason"]) == ("failed", "the platform reported that the send failed")
    assert fake.push_mass_event(int(failed["msgId"])) == (200, "success")
    later = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    assert later["status"] == "failed" and "political" in later["failReason"], later
    task = admin_client.get(f"/api/review/tasks/{edition['taskIds'][0]}").get_json()
    assert [e["type"] for e in task["timeline"]].count("edition_failed") == 1
    assert len(outbox("edition.failed")) == 1
    # The same event again (a new nonce) changes nothing more.
    assert fake.push_mass_event(int(failed["msgId"])) == (200, "success")
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["version"] == later["version"]


@pytest.mark.parametrize(
    ("errcode", "words"), [(45028, "no mass-send quota is left"), (48001, "only verified accounts"), (40007, "40007")]
)
def test_a_refused_sendall_fails_it_with_the_reason(app, admin_client, agent_headers, fake, served_url, errcode, words):
    fake.fail_next_sendall(errcode)
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    failed = wait_for_edition(admin_client, edition)
    assert failed["status"] == "failed" and words in failed["failReason"], failed
    assert fake.mass_sends == {}


def test_sending_to_a_tag_and_the_tags(app, admin_client, agent_headers, fake, served_url):
    tags = admin_client.get("/api/editions/tags?account=silicon-rise").get_json()["tags"]
    assert {"id": 100, "name": "早读会员", "count": 326} in tags
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition, tagId=100, ignoreReprint=True)
    assert wait_for_edition(admin_client, edition)["status"] == "sent"
    [call] = fake.requests_to("message/mass/sendall")
    assert call["json"]["filter"] == {"is_to_all": False, "tag_id": 100} and call["json"]["send_ignore_reprint"] == 1


def test_an_answer_nested_too_deeply_fails_the_edition_in_words(app, admin_client, agent_headers, fake, served_url):
    """docs/api.md §5: before, 100,000 '[' from draft/add escaped the pass as a RecursionError and the edition
    stayed `sending` until its lease; now it fails at once, saying why."""
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    fake.fail_next("draft/add", status=200, body="[" * 100_000, content_type="application/json")
    send_edition(admin_client, edition)
    failed = wait_for_edition(admin_client, edition, seconds=30)
    assert failed["status"] == "failed" and "nested too deeply" in failed["failReason"], failed
    assert fake.requests_to("message/mass/sendall") == []


@pytest.mark.parametrize(
    ("tag", "words"),
    [
        ({"id": "abc", "name": "会员", "count": 3}, "id is 'abc', not a whole number"),
        ({"id": 100, "name": "会员", "count": None}, "count is null, not a whole number"),
        ({"id": 100, "name": "会员"}, "count is missing"),
        ({"id": 2**40, "name": "会员", "count": 3}, "id is 1099511627776"),
        ({"id": 100, "name": ["会员"], "count": 3}, "name is ['会员'], not a text"),
    ],
)
def test_a_tags_answer_of_the_wrong_shape_is_a_502_in_words(admin_client, fake, tag, words):
    """docs/api.md §21: before, `id: "abc"` or `count: null` from tags/get was a 500."""
    fake.tags[APPID] = [{"id": 2, "name": "星标组", "count": 1}, tag]
    answer = admin_client.get("/api/editions/tags?account=silicon-rise")
    error = assert_error(answer, 502, "platform_error")
    assert "tags/get" in error["message"] and words in error["message"], error


@pytest.mark.parametrize("tags", ["not a list", {"id": 1}, [7, "x"], None])
def test_a_tags_answer_that_is_not_a_list_of_tags_is_a_502_in_words(admin_client, fake, tags):
    """Before, a `tags` missing, null, text, an object or a list of non-objects was taken as no tags: 200 []."""
    fake.tags[APPID] = tags
    error = assert_error(admin_client.get("/api/editions/tags?account=silicon-rise"), 502, "platform_error")
    assert "tags/get answered something other than a list of tags" in error["message"], error


@pytest.mark.parametrize("edition_settings", [{"WECHAT_SILICON_RISE_MASS_QUOTA": "2/month"}], indirect=True)
def test_a_monthly_quota_counts_the_month(app, admin_client, agent_headers, fake):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    editions = [propose(admin_client, [task]) for task in tasks]
    zone = app.extensions["settings"].time_zone
    now = datetime.now(zone)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (start + timedelta(days=32)).replace(day=1)
    soon = min(now + timedelta(hours=1), following - timedelta(minutes=2))
    for edition in editions[:2]:
        send_edition(admin_client, edition, at=max(soon, now + timedelta(minutes=1)).isoformat())
    refused = admin_client.post(f"/api/editions/{editions[2]['id']}/send", json={"at": soon.isoformat()})
    assert_error(refused, 409, "quota_exceeded")
    assert refused.get_json()["error"]["details"]["nextPossibleAt"] == [
        following.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    ]


def test_what_cannot_go_in_an_edition_is_named(app, client, admin_client, agent_headers, fake, served_url):
    published = published_articles(app, admin_client, agent_headers, 2)
    other = published_articles(app, admin_client, agent_headers, 1, account="carbon-fitness")[0]
    pending = create_task(admin_client, agent_headers, article_payload())
    images = [make_asset(app, 600, 800) for _ in range(2)]
    post = create_task(admin_client, agent_headers, image_post_payload(images, publicAccount="silicon-rise"))
    admin_client.post(decision_url(post), json=approve_image_post(images, action="approve_and_publish"))
    held = propose(admin_client, [published[1]])
    alone = published_article(app, admin_client, agent_headers)
    fake.withhold_events = True
    assert (
        admin_client.post(
            go_live_url(alone), json={"at": (datetime.now(UTC) + timedelta(days=1)).isoformat()}
        ).status_code
        == 202
    )
    answer = admin_client.post(
        "/api/editions",
        json={
            "account": "silicon-rise",
            "taskIds": [
                published[0]["id"],
                other["id"],
                pending["id"],
                post["id"],
                published[1]["id"],
                alone["id"],
                "nope",
            ],
        },
    )
    assert_error(answer, 409, "invalid_state")
    details = answer.get_json()["error"]["details"]
    assert set(details) == {other["id"], pending["id"], post["id"], published[1]["id"], alone["id"], "nope"}
    assert "carbon-fitness" in details[other["id"]][0] and "image post" in details[post["id"]][0]
    assert held["id"] in details[published[1]["id"]][0] and "going live" in details[alone["id"]][0]
    assert "pending_review" in details[pending["id"]][0] and "no such task" in details["nope"][0]
    # Shape: 1 to 8 distinct tasks of a known account.
    for body in (
        {"account": "silicon-rise", "taskIds": []},
        {"account": "silicon-rise", "taskIds": ["a"] * 2},
        {"account": "silicon-rise", "taskIds": [f"t{i}" for i in range(9)]},
        {"account": "moon", "taskIds": ["a"]},
        {"taskIds": ["a"]},
    ):
        assert_error(admin_client.post("/api/editions", json=body), 400, "validation_error")
    # Only a draft changes; a sent one is never deleted; a client token is nobody here.
    send_edition(admin_client, held)
    assert wait_for_edition(admin_client, held, seconds=20)["status"] == "sent"
    assert_error(
        admin_client.patch(f"/api/editions/{held['id']}", json={"taskIds": [published[0]["id"]]}), 409, "invalid_state"
    )
    assert_error(admin_client.delete(f"/api/editions/{held['id']}"), 409, "invalid_state")
    assert_error(admin_client.delete(f"/api/editions/{held['id']}/send"), 409, "invalid_state")
    assert_error(client.get("/api/editions", headers={"x-feedback-client-token": "web-token"}), 401, "unauthorized")
    draft = propose(client, [published[0]], agent_headers)
    assert_error(client.delete(f"/api/editions/{draft['id']}", headers=agent_headers), 401, "unauthorized")
    assert admin_client.delete(f"/api/editions/{draft['id']}").status_code == 204
    assert_error(admin_client.get(f"/api/editions/{draft['id']}"), 404, "not_found")
    listed = admin_client.get("/api/editions?account=silicon-rise&status=sent").get_json()
    assert [e["id"] for e in listed] == [held["id"]]


# No poll in this test: a poll's bookkeeping moves the version too, and only the events may be seen here.
@pytest.mark.parametrize("edition_settings", [{"WECHAT_PUBLISH_POLL_DELAYS": "60"}], indirect=True)
def test_a_forged_or_replayed_mass_event_changes_nothing(app, admin_client, agent_headers, fake, served_url):
    fake.withhold_events = True
    fake.mass_seconds = 3600  # it stays sending
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["msgId"], 10, "no msg_id")
    current = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    target = {
        "url": f"{served_url}/wechat/silicon-rise/events",
        "token": LIVE_TOKEN,
        "aes_key": LIVE_AES_KEY,
        "mode": "aes",
    }
    forged = {**target, "token": "not-the-token"}
    assert fake.push_mass_event(int(current["msgId"]), forged, status="err(20001)")[0] == 403
    plain = {**target, "mode": "plain"}  # an account with a key takes safe mode only
    assert fake.push_mass_event(int(current["msgId"]), plain, status="err(20001)")[0] == 403
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["version"] == current["version"]
    # carbon-fitness has no server URL here; silicon-rise's own event with another msg_id changes nothing.
    assert fake.push_mass_event(int(current["msgId"]), target, status="send success") == (200, "success")
    assert admin_client.get(f"/api/editions/{edition['id']}").get_json()["status"] == "sent"


def test_the_agent_proposes_and_reads_an_edition_over_mcp(app, admin_client, agent_headers, fake):
    from mcp import Client

    from tests.helpers.mcp import call, run, stdio_params

    tasks = published_articles(app, admin_client, agent_headers, 2)
    with live_server(app) as base_url:

        async def agent_side():
            async with Client(stdio_params(base_url, token=agent_headers["x-review-agent-token"])) as client:
                failed, edition = await call(
                    client, "propose_edition", {"account": "silicon-rise", "taskIds": [t["id"] for t in tasks]}
                )
                assert not failed and edition["status"] == "draft", edition
                failed, again = await call(
                    client, "propose_edition", {"account": "silicon-rise", "taskIds": [tasks[0]["id"]]}
                )
                assert failed and "is in edition" in str(again), again  # the refusal names the task and why
                failed, read = await call(client, "get_edition", {"editionId": edition["id"]})
                return read

        read = run(agent_side())
    assert read["taskIds"] == [t["id"] for t in tasks] and read["createdBy"] is None


def test_deleting_a_task_leaves_a_draft_edition_and_waits_for_a_scheduled_one(app, admin_client, agent_headers, fake):
    tasks = published_articles(app, admin_client, agent_headers, 3)
    draft = propose(admin_client, tasks[:2])
    scheduled = propose(admin_client, tasks[2:])
    send_edition(admin_client, scheduled, at=(datetime.now(UTC) + timedelta(days=1)).isoformat())
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

    meanings = {
        10001: "advertising",
        20001: "political",
        20002: "pornographic",
        20004: "society",
        20006: "criminal",
        20008: "fraud",
        20013: "copyright",
        21000: "other reasons",
        22000: "mutual promotion",
    }
    with app.test_request_context():
        for code, word in meanings.items():
            with force_locale("en"):
                assert word in edition_failure(f"err({code})") and str(code) in edition_failure(f"err({code})")
            with force_locale(LOCALES["zh-CN"]):
                chinese = edition_failure(f"err({code})")
                assert str(code) in chinese and word not in chinese, chinese


def test_an_edition_whose_task_went_live_alone_meanwhile_fails_and_sends_nothing(
    app, admin_client, agent_headers, fake, served_url
):
    """Issue 52 item 2: the edition did not look at its tasks again when it claimed its send. Here one went
    live alone after the edition was scheduled (the platform's word on a submission the service had given up
    on); the edition fails saying so, and nothing reaches the platform."""
    fake.withhold_events = True
    fake.publish_seconds = 3600  # the platform keeps saying "publishing"
    tasks = published_articles(app, admin_client, agent_headers, 2)
    alone = tasks[1]
    assert admin_client.post(go_live_url(alone), json={}).status_code == 202
    publish_id = wait_for_live(admin_client, alone, statuses=("publishing",))["live"]["publishId"]
    with db.connection_context():  # a day later (docs/api.md §18 "Polling"): the service stops waiting
        TaskLive.update(submitted_at=iso(utcnow() - timedelta(hours=25)), next_poll_at=iso(utcnow())).execute()
    assert wait_for_live(admin_client, alone)["live"]["status"] == "failed"  # so it may join an edition
    edition = propose(admin_client, tasks)
    send_edition(admin_client, edition, at=(datetime.now(UTC) + timedelta(hours=1)).isoformat())
    # The platform's word comes after all: the task is live alone.
    with fake._lock:
        fake.publishes[publish_id].update(status=0, article_id="ARTICLE_ALONE", article_url=f"{fake.base_url}/s/A")
    assert fake.push_publish_event(publish_id) == (200, "success")
    assert admin_client.get(f"/api/review/tasks/{alone['id']}").get_json()["live"]["status"] == "live"
    drafts_made = len(fake.requests_to("draft/add"))
    with db.connection_context():  # the edition's time comes (moved, as a clock would be)
        Edition.update(send_at=iso(utcnow())).where(Edition.edition_id == edition["id"]).execute()
    failed = wait_for_edition(admin_client, edition, seconds=60)
    assert failed["status"] == "failed", failed
    assert "went live alone or changed" in failed["failReason"] and alone["id"] in failed["failReason"], failed
    assert "nothing was sent" in failed["failReason"]
    assert fake.sendall_calls == 0 and len(fake.requests_to("draft/add")) == drafts_made  # nothing sent
    assert fake.mass_sends == {}
    [told] = outbox("edition.failed")
    assert told["reasonCode"] == "tasks_changed", told
    timeline = admin_client.get(f"/api/review/tasks/{tasks[0]['id']}").get_json()["timeline"]
    assert [e["type"] for e in timeline][-1] == "edition_failed"
    # The other task was never sent: it may go live alone or in another edition.
    assert admin_client.get(f"/api/review/tasks/{tasks[0]['id']}").get_json()["live"] is None
    admin_client.set_cookie("review_lang", "zh-CN")
    assert "单独发表" in admin_client.get("/editions?account=silicon-rise").get_data(as_text=True)
    # The task's timeline says it in Chinese too (it said the English reason stored with the event).
    page = admin_client.get(f"/review/{tasks[0]['id']}").get_data(as_text=True)
    entry = page[page.index('data-event="edition_failed"') :]
    assert (
        "没有发出任何内容" in entry[: entry.index("</li>")] and "nothing was sent" not in entry[: entry.index("</li>")]
    )


def test_an_event_count_out_of_range_is_stored_as_null(app, admin_client, agent_headers, fake, served_url):
    """Issue 52 item 5: a count that is not a number from 0 to 2^31 - 1 was stored as 0 (or as the number,
    up to 12 digits; "²" broke the event)."""
    fake.withhold_events = True
    fake.mass_seconds = 3600  # it stays sending until the test's event
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 1))
    send_edition(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["msgId"], 10, "no msg_id")
    msg_id = admin_client.get(f"/api/editions/{edition['id']}").get_json()["msgId"]
    xml = (
        "<xml><ToUserName><![CDATA[gh_fake]]></ToUserName><FromUserName><![CDATA[oFakePlatform]]></FromUserName>"
        "<CreateTime>1</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[MASSSENDJOBFINISH]]></Event>"
        f"<MsgID>{msg_id}</MsgID><Status><![CDATA[send success]]></Status><TotalCount>-5</TotalCount>"
        "<FilterCount>2147483648</FilterCount><SentCount>\u00b2</SentCount><ErrorCount>2147483647</ErrorCount>"
        "<ArticleUrlResult><Count>0</Count><ResultList></ResultList></ArticleUrlResult></xml>"
    ).encode()
    url = f"{served_url}/wechat/silicon-rise/events"
    assert signed_push(url, LIVE_TOKEN, xml, "aes", LIVE_AES_KEY, APPID).text == "success"
    sent = admin_client.get(f"/api/editions/{edition['id']}").get_json()
    assert sent["status"] == "sent", sent
    assert sent["counts"] == {"total": None, "filter": None, "sent": None, "error": 2147483647}
    [told] = outbox("edition.sent")
    assert told["counts"] == sent["counts"]
    page = admin_client.get("/editions?account=silicon-rise").get_data(as_text=True)
    assert 'data-count="total">–<' in page and 'data-count="error">2147483647<' in page and ">None<" not in page


@pytest.mark.parametrize(
    ("code", "freed"),
    [("errcode_48001", True), ("tasks_changed", True), ("err(10001)", True), ("no_answer", False), ("deleted", False)],
)
def test_a_failed_edition_says_its_articles_are_free_only_where_no_follower_got_it(app, admin_client, code, freed):
    """ "Its articles are free again" under a send that may have gone out (no answer, no result, deleted after
    sending) would lead an editor to send the same articles to every follower twice."""
    now = iso(utcnow())
    with db.connection_context():
        Edition.create(
            edition_id="ed_failed",
            account="silicon-rise",
            status="failed",
            task_ids=[],
            send_at=now,
            fail_code=code,
            fail_reason=code,
            created_by=None,
            created_at=now,
            updated_at=now,
        )
    page = admin_client.get("/editions?account=silicon-rise").get_data(as_text=True)
    assert 'data-role="edition-failure"' in page
    assert ('data-role="edition-next"' in page) is freed
