"""Readers' comments (docs/api.md §23), black-box over HTTP with the fake platform: fetched to their own
article (alone or in an edition), paged under 50, kept once, removed ones marked; the agent proposes, only an
editor's reply reaches readers; a refusal changes nothing; no reader's openid in any answer."""

import json

import pytest
from standardwebhooks import Webhook

from models import db
from tests.helpers.app import AGENT_TOKEN, assert_error
from tests.helpers.comments import article, fetch
from tests.helpers.editions import propose, published_articles, send_edition
from tests.helpers.publishing import STATS_SECRET, live_task, published_article
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores
AGENT = {"x-review-agent-token": AGENT_TOKEN}
OPENID = "oReaderSecretOpenid"


def comments(client, task, headers=None):
    answer = client.get(f"/api/review/tasks/{task['id']}/comments", headers=headers or {})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def agent_comments(client, task):
    answer = client.get(f"/api/review/agent/tasks/{task['id']}/comments", headers=AGENT)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def actions(client, task):
    """The task's timeline without the webhook deliveries (agent_notified comes when the sender has sent)."""
    timeline = client.get(f"/api/review/tasks/{task['id']}").get_json()["timeline"]
    return [e for e in timeline if not e["type"].startswith("agent_notif")]


def url(task, comment, tail=""):
    return f"/api/review/tasks/{task['id']}/comments/{comment['id']}{tail}"


def test_an_article_and_an_editions_articles_hear_their_own_comments(
    app, client, admin_client, agent_headers, fake, receiver, served_url
):
    alone = live_task(app, admin_client, agent_headers, days_ago=1)
    edition = propose(admin_client, published_articles(app, admin_client, agent_headers, 2))
    send_edition(admin_client, edition)
    wait_until(lambda: admin_client.get(f"/api/editions/{edition['id']}").get_json()["status"] == "sent", 15, "unsent")
    first, second = (admin_client.get(f"/api/review/tasks/{tid}").get_json() for tid in edition["taskIds"])
    assert article(first)[1] == 0 and article(second)[1] == 1  # the send's articles counted from 0
    for task, words in ((alone, "alone"), (first, "headline"), (second, "second")):
        fake.add_comment(*article(task), f"about the {words} article", openid=OPENID)
    assert "3 articles fetched, 3 new comments stored" in fetch(app)
    for task, words in ((alone, "alone"), (first, "headline"), (second, "second")):
        body = comments(admin_client, task)
        assert [c["content"] for c in body["comments"]] == [f"about the {words} article"]
        assert body["lastFetchedAt"] and body["lastError"] is None
        assert agent_comments(client, task)["comments"] == body["comments"]
    # The same reader is one pseudonym per account; their openid is in no answer.
    readers = {comments(admin_client, task)["comments"][0]["reader"] for task in (alone, first, second)}
    assert len(readers) == 1 and len(readers.pop()) == 8
    # The agent hears each task's new comments once, and never a reader's openid.
    assert receiver.wait_for(3, timeout=15)
    fetch(app)  # nothing new: nothing told again
    fake.add_comment(*article(alone), "a second thought", openid="oAnother")
    fetch(app, "--account", "silicon-rise")
    assert receiver.wait_for(4, timeout=15)
    bodies = [Webhook(STATS_SECRET).verify(body, headers) for headers, body in receiver.received]
    assert {b["type"] for b in bodies} == {"review_task.comments"}
    told = [(b["data"]["taskId"], c["content"]) for b in bodies for c in b["data"]["comments"]]
    assert sorted(told) == sorted(
        [
            (alone["id"], "about the alone article"),
            (first["id"], "about the headline article"),
            (second["id"], "about the second article"),
            (alone["id"], "a second thought"),
        ]
    )
    assert set(bodies[0]["data"]["comments"][0]) == {"id", "reader", "content", "createdAt"}
    for text in [json.dumps(bodies), *(json.dumps(comments(admin_client, t)) for t in (alone, first, second))]:
        assert OPENID not in text and "openid" not in text.lower()
    assert OPENID not in json.dumps(agent_comments(client, alone))


def test_120_comments_are_paged_in_three_calls_and_kept_once(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comments(*article(task), 120)
    fetch(app)
    lists = [r["json"] for r in fake.requests_to("comment/list")]
    assert [(r["begin"], r["count"], r["index"], r["type"]) for r in lists] == [
        (0, 49, 0, 0),
        (49, 49, 0, 0),
        (98, 49, 0, 0),
    ]
    body = comments(admin_client, task)
    assert len(body["comments"]) == 120 and len({c["id"] for c in body["comments"]}) == 120
    assert body["comments"][0]["createdAt"] >= body["comments"][-1]["createdAt"]  # newest first
    fetch(app)
    assert len(comments(admin_client, task)["comments"]) == 120


def test_a_comment_gone_from_the_list_is_marked_removed(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    kept, gone = fake.add_comment(*article(task), "stays"), fake.add_comment(*article(task), "goes")
    fetch(app)
    fake.remove_comment(*article(task), gone)
    fetch(app)
    by_text = {c["content"]: c["removed"] for c in comments(admin_client, task)["comments"]}
    assert by_text == {"stays": False, "goes": True} and kept != gone


def test_a_proposal_never_reaches_readers_without_an_editor(app, client, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comment(*article(task), "when is part two?")
    fetch(app)
    comment = comments(admin_client, task)["comments"][0]
    proposed = client.post(
        url(task, comment, "/proposals").replace("/tasks/", "/agent/tasks/"), json={"content": "Soon!"}, headers=AGENT
    )
    assert proposed.status_code == 201, proposed.get_json()
    assert [p["state"] for p in proposed.get_json()["proposals"]] == ["proposed"]
    assert (
        client.post(
            url(task, comment, "/proposals").replace("/tasks/", "/agent/tasks/"),
            json={"content": "x" * 1001},
            headers=AGENT,
        ).status_code
        == 400
    )
    assert fake.requests_to("comment/reply/add") == []  # nothing reached readers
    assert agent_comments(client, task)["comments"][0]["reply"] is None
    # The agent cannot send it itself.
    assert client.post(url(task, comment, "/reply"), json={"content": "Soon!"}, headers=AGENT).status_code == 401
    other = client.post(
        url(task, comment, "/proposals").replace("/tasks/", "/agent/tasks/"),
        json={"content": "Next week"},
        headers=AGENT,
    ).get_json()["proposals"][1]
    first = proposed.get_json()["proposals"][0]
    sent = admin_client.post(
        url(task, comment, "/reply"), json={"content": "Soon, next Monday!", "proposalId": first["id"]}
    )
    assert sent.status_code == 200, sent.get_json()
    assert [r["json"]["content"] for r in fake.requests_to("comment/reply/add")] == ["Soon, next Monday!"]
    states = {p["id"]: p["state"] for p in sent.get_json()["proposals"]}
    assert states == {first["id"]: "edited", other["id"]: "discarded"}
    assert sent.get_json()["reply"]["content"] == "Soon, next Monday!" and sent.get_json()["reply"]["by"]
    timeline = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["timeline"]
    replied = [e for e in timeline if e["type"] == "comment_replied"]
    assert replied and replied[0]["actor"] == "admin" and replied[0]["actorName"]
    assert [e["actor"] for e in timeline if e["type"] == "comment_reply_proposed"] == ["agent", "agent"]


def test_a_refusal_changes_nothing(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comment(*article(task), "nice")
    fetch(app)
    comment = comments(admin_client, task)["comments"][0]
    before = comments(admin_client, task)
    events = len(actions(admin_client, task))
    for errcode, words, call in (
        (
            88000,
            "no comment privilege",
            lambda: admin_client.post(url(task, comment, "/reply"), json={"content": "Thanks"}),
        ),
        (
            88002,
            "limited for safety",
            lambda: admin_client.post(url(task, comment, "/featured"), json={"featured": True}),
        ),
        (88001, "no such send", lambda: admin_client.delete(url(task, comment))),
        (
            88001,
            "no such send",
            lambda: admin_client.post(f"/api/review/tasks/{task['id']}/comments/open", json={"open": False}),
        ),
    ):
        fake.comments_fail_next(errcode)
        answer = call()
        assert_error(answer, 502, "platform_error")
        assert words in answer.get_json()["error"]["message"], answer.get_json()
    assert comments(admin_client, task) == before
    assert len(actions(admin_client, task)) == events
    # Taken, each is recorded with who did it.
    assert admin_client.post(url(task, comment, "/featured"), json={"featured": True}).get_json()["featured"] is True
    assert (
        admin_client.post(f"/api/review/tasks/{task['id']}/comments/open", json={"open": False}).get_json()["open"]
        is False
    )
    assert fake.comments_open(*article(task)) is False
    assert admin_client.delete(url(task, comment)).get_json()["removed"] is True
    kinds = [e["type"] for e in actions(admin_client, task)][events:]
    assert sorted(kinds) == ["comment_deleted", "comment_featured", "comments_closed"]


def test_unknown_comments_and_tasks_not_live(app, admin_client, agent_headers, fake):
    waiting = published_article(app, admin_client, agent_headers)
    assert comments(admin_client, waiting) == {"comments": [], "open": None, "lastFetchedAt": None, "lastError": None}
    assert_error(
        admin_client.post(f"/api/review/tasks/{waiting['id']}/comments/cm_x/reply", json={"content": "hi"}),
        409,
        "not_live",
    )
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    assert_error(
        admin_client.post(f"/api/review/tasks/{task['id']}/comments/cm_x/reply", json={"content": "hi"}),
        404,
        "not_found",
    )
    assert_error(admin_client.get("/api/review/tasks/nope/comments"), 404, "not_found")


def test_deleting_a_task_deletes_its_comments(app, admin_client, agent_headers, fake):
    from models.comments import CommentFetch, CommentProposal, ReaderComment

    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comment(*article(task), "bye")
    fetch(app)
    assert admin_client.delete(f"/api/review/tasks/{task['id']}").status_code == 200
    with db.connection_context():
        assert (ReaderComment.select().count(), CommentProposal.select().count(), CommentFetch.select().count()) == (
            0,
            0,
            0,
        )
