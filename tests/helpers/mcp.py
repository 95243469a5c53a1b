"""Driving `python -m agentmcp` over stdio with the `mcp` SDK's own client (docs/api.md §13)."""

import asyncio
import os
import sys
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.helpers.app import AGENT_TOKEN

ROOT = Path(__file__).resolve().parents[2]


def stdio_params(base_url, token=AGENT_TOKEN, upload_root=None):
    env = {"REVIEW_BASE_URL": base_url, "REVIEW_AGENT_TOKEN": token, "PATH": os.environ.get("PATH", "")}
    if upload_root is not None:
        env["MCP_UPLOAD_ROOT"] = str(upload_root)
    return StdioServerParameters(command=sys.executable, args=["-m", "agentmcp"], env=env, cwd=str(ROOT))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=60))


async def call(client, name, arguments):
    result = await client.call_tool(name, arguments)
    return result.is_error, result.structured_content
