"""The MCP tool export_dataset returns the API's lines, as many as asked for (docs/api.md §13, §20)."""

import asyncio
import json

import jsonschema
from mcp import Client

from agentmcp.api import ReviewApi
from agentmcp.server import build_server
from agentmcp.tools import build_tools
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.review import (
    approve_article,
    article_payload,
    article_selections,
    create_task,
    decision_url,
    live_server,
    locked_except,
    make_asset,
)

TOOL = next(tool for tool in build_tools() if tool.name == "export_dataset")


def test_export_dataset_gives_the_apis_lines_up_to_its_limit(app, client, admin_client, agent_headers, tmp_path):
    cover = make_asset(app, 900, 500)
    for number in range(3):
        task = create_task(client, agent_headers, article_payload([cover["url"]], context={"prompt": f"第{number}篇"}))
        if number == 1:
            selections = article_selections(task, cover)
            answer = admin_client.post(
                decision_url(task),
                json={
                    "action": "reject_rework",
                    "rejectedElements": ["title"],
                    "rejectionReason": "other",
                    "selections": selections,
                    "lockedSelections": locked_except(selections, ["title"]),
                },
            )
        else:
            answer = admin_client.post(decision_url(task), json=approve_article(task, cover))
        assert answer.status_code == 200, answer.get_json()
    api_lines = [
        json.loads(line)
        for line in admin_client.get("/api/review/dataset?format=kto").get_data(as_text=True).splitlines()
    ]
    assert len(api_lines) == 3  # two approved articles true, one rejected title false
    arguments = [
        {"format": "kto", "limit": 2},
        {"format": "kto"},
        {"format": "raw", "account": "carbon-fitness"},
        {"format": "kto", "limit": 1001},
        {"format": "csv"},
        {"format": "raw", "from": "yesterday"},
    ]
    for given in arguments[:3]:
        assert not list(jsonschema.Draft202012Validator(TOOL.input_schema).iter_errors(given))
    with live_server(app) as base_url:
        api = ReviewApi(base_url, AGENT_TOKEN, upload_root=str(tmp_path))

        async def agent():
            async with Client(build_server(api)) as mcp:
                return [await mcp.call_tool("export_dataset", given) for given in arguments]

        two, every, none, too_many, bad_format, bad_date = asyncio.run(asyncio.wait_for(agent(), timeout=60))
    assert not two.is_error and two.structured_content == {"lines": api_lines[:2]}
    assert every.structured_content == {"lines": api_lines}
    assert none.structured_content == {"lines": []}
    assert too_many.is_error and too_many.structured_content["error"]["details"] == {"limit": ["must be 1 to 1000"]}
    for refused, field in ((bad_format, "format"), (bad_date, "from")):
        assert refused.is_error and refused.structured_content["error"]["status"] == 400
        assert field in refused.structured_content["error"]["details"]
