"""An MCP server for agents (docs/api.md §13): tools over the service's HTTP API. A client of the API like any
agent script: it imports only the schemas (for its tool definitions), so it can run on another machine."""
