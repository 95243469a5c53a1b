"""The MCP tools `list_comments` and `propose_reply` (docs/api.md §13, §23), driven over stdio by the `mcp`
SDK's own client against the service on a real HTTP server and the fake platform: the agent reads a live
article's comments by pseudonym and proposes a reply that reaches no reader until an editor sends it."""

import json

import pytest
from mcp import Client

from tests.helpers.comments import article, fetch
from tests.helpers.mcp import call, run, stdio_params
from tests.helpers.publishing import live_task
from tests.helpers.review import live_server

pytestmark = pytest.mark.both_stores
OPENID = "oReaderSecretOpenid"


def test_the_agent_lists_comments_and_proposes_a_reply_through_mcp(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comment(*article(task), "when is part two?", openid=OPENID)
    fetch(app)
    with live_server(app) as base_url:

        async def agent_side():
            async with Client(stdio_params(base_url)) as client:
                listed = await call(client, "list_comments", {"taskId": task["id"]})
                comment = listed[1]["comments"][0]
                proposed = await call(
                    client, "propose_reply", {"taskId": task["id"], "commentId": comment["id"], "content": "Soon!"}
                )
                again = await call(client, "list_comments", {"taskId": task["id"]})
                unknown = await call(
                    client, "propose_reply", {"taskId": task["id"], "commentId": "cm_nope", "content": "Soon!"}
                )
                too_long = await call(
                    client, "propose_reply", {"taskId": task["id"], "commentId": comment["id"], "content": "x" * 1001}
                )
                missing = await call(client, "list_comments", {"taskId": "task_nope"})
                return listed, proposed, again, unknown, too_long, missing

        listed, proposed, again, unknown, too_long, missing = run(agent_side())
    failed, body = listed
    assert not failed, body
    assert [c["content"] for c in body["comments"]] == ["when is part two?"]
    assert len(body["comments"][0]["reader"]) == 8 and body["lastFetchedAt"]
    failed, comment = proposed
    assert not failed, comment
    assert [(p["content"], p["state"]) for p in comment["proposals"]] == [("Soon!", "proposed")]
    assert again[1]["comments"][0]["proposals"] == comment["proposals"]
    assert fake.requests_to("comment/reply/add") == []  # the proposal reached no reader
    assert unknown[0] and unknown[1]["error"]["code"] == "not_found"
    assert too_long[0]  # refused by the tool's schema or the service's 400: either way, nothing stored
    assert missing[0] and missing[1]["error"]["code"] == "not_found"
    assert len(admin_client.get(f"/api/review/tasks/{task['id']}/comments").get_json()["comments"][0]["proposals"]) == 1
    for answer in (listed, proposed, again):
        assert OPENID not in json.dumps(answer[1]) and "openid" not in json.dumps(answer[1]).lower()
