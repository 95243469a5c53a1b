"""`python -m agentmcp` (stdio) or `python -m agentmcp --http PORT` (streamable HTTP on 127.0.0.1; PORT 0: a
free one). With --http it prints "MCP server listening on http://127.0.0.1:PORT/mcp" to stderr once started.

Reads REVIEW_BASE_URL (the service, e.g. http://127.0.0.1:8000) and REVIEW_AGENT_TOKEN;
MCP_UPLOAD_ROOT (default: the current folder) is the folder upload_image may read files from;
with --http, MCP_HTTP_TOKEN (required) is the bearer token every HTTP request must carry.
"""

import argparse
import os
import sys

import anyio

from agentmcp.api import ReviewApi
from agentmcp.server import serve_http, serve_stdio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentmcp", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp (0: a free port)"
    )
    args = parser.parse_args(argv)
    http_token = os.environ.get("MCP_HTTP_TOKEN", "").strip()
    if args.http is not None and not http_token:  # any local process could otherwise act with the agent's token
        print("agentmcp: set MCP_HTTP_TOKEN (the bearer token HTTP clients must send) to serve --http", file=sys.stderr)
        return 2
    try:
        api = ReviewApi(
            os.environ.get("REVIEW_BASE_URL", ""),
            os.environ.get("REVIEW_AGENT_TOKEN", ""),
            upload_root=os.environ.get("MCP_UPLOAD_ROOT") or None,
        )
    except ValueError as exc:
        print(f"agentmcp: {exc}", file=sys.stderr)
        return 2
    if args.http is not None:
        serve_http(api, args.http, http_token)
    else:
        anyio.run(serve_stdio, api)
    return 0


if __name__ == "__main__":
    sys.exit(main())
