"""The MCP tools see going live and what readers did as the API says (docs/api.md §13, §18, §19)."""

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from models import db
from services.stats import fetching
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.publishing import live_task, yesterday
from tests.helpers.review import live_server

ROOT = Path(__file__).resolve().parents[2]


def test_get_task_stats_and_the_task_shape_match_the_api(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1, fake=fake)
    fake.day_figures[(task["live"]["articleId"], yesterday(app))] = {"read_user": 77, "comment_count": 4}
    with db.connection_context():
        fetching.daily_step(app.extensions["settings"])
    api = admin_client.get(f"/api/review/tasks/{task['id']}/stats").get_json()
    with live_server(app) as base:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "agentmcp"],
            cwd=str(ROOT),
            env={"REVIEW_BASE_URL": base, "REVIEW_AGENT_TOKEN": AGENT_TOKEN, "PATH": os.environ.get("PATH", "")},
        )

        async def agent_side():
            async with Client(params) as client:
                figures = await client.call_tool("get_task_stats", {"taskId": task["id"]})
                shape = await client.call_tool("get_review_task", {"taskId": task["id"]})
                return figures, shape

        figures, shape = asyncio.run(asyncio.wait_for(agent_side(), 60))
    assert not figures.is_error and figures.structured_content == api
    assert api["days"][0]["readUser"] == 77 and api["totals"]["commentCount"] == 4
    assert shape.structured_content["live"]["articleUrl"] == task["live"]["articleUrl"]
