"""The MCP server: lists the tools and runs them against the service, over stdio or streamable HTTP."""

import hashlib
import hmac
import json
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from agentmcp.api import ApiError, ReviewApi
from agentmcp.tools import build_tools

INSTRUCTIONS = """\
Tools of a content review service: upload images, create a review task for a human reviewer, then
follow it (get_review_task, list_review_tasks). A task rejected for rework (status rejected_rework)
names its rejectedElements and rejectionNote: send new values for those with patch_task_elements.
What the editors decided and readers did comes back as training data with export_dataset.
Errors carry the service's code, message and details (the field at fault)."""


def build_server(api: ReviewApi) -> Server:
    tools = {tool.name: tool for tool in build_tools()}

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema)
                for tool in tools.values()
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return _error(ApiError(404, "unknown_tool", f"no tool named {params.name!r}; see tools/list"))
        try:
            # The API client is blocking (requests): run it off the event loop.
            result = await anyio.to_thread.run_sync(tool.run, api, dict(params.arguments or {}))
        except ApiError as exc:
            return _error(exc)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_json(result))],
            structured_content=result if isinstance(result, dict) else {"result": result},
        )

    return Server(
        "content-review", version="1", instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )


def _error(error: ApiError) -> types.CallToolResult:
    body = {"error": error.as_dict()}
    return types.CallToolResult(
        is_error=True, content=[types.TextContent(type="text", text=_json(body))], structured_content=body
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def serve_stdio(api: ReviewApi) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(api)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


UNAUTHORIZED = json.dumps(
    {"error": {"code": "unauthorized", "message": "send Authorization: Bearer <MCP_HTTP_TOKEN>", "details": {}}}
).encode()


class BearerToken:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <MCP_HTTP_TOKEN>` (docs/api.md §16): any
    local process can reach 127.0.0.1, and the tools act with the agent's token."""

    def __init__(self, app: Any, token: str):
        self.app, self.digest = app, hashlib.sha256(token.encode()).digest()

    def allowed(self, headers: list[tuple[bytes, bytes]]) -> bool:
        value = dict(headers).get(b"authorization", b"")
        scheme, _, presented = value.partition(b" ")
        # Digests of equal length, compared in constant time: the answer's timing tells nothing of the token.
        matches = hmac.compare_digest(hashlib.sha256(presented.strip()).digest(), self.digest)
        return scheme.lower() == b"bearer" and matches

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" or self.allowed(scope.get("headers", [])):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": UNAUTHORIZED})
        else:  # a websocket
            await send({"type": "websocket.close", "code": 1008})


def serve_http(api: ReviewApi, port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:port (0: a free one), path /mcp (the SDK guards it against DNS rebinding),
    behind the token. Says where it listens on stderr once the port is open (docs/api.md §13)."""
    import uvicorn

    app = build_server(api).streamable_http_app(host="127.0.0.1")
    try:
        listening = socket.create_server(("127.0.0.1", port))  # bound here, so the line names the real port
    except OSError as exc:
        raise SystemExit(f"agentmcp: cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    print(f"MCP server listening on http://127.0.0.1:{listening.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(BearerToken(app, token), log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])
