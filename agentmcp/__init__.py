"""An MCP server for agents (docs/api.md §13): five tools over the service's HTTP API.

A client of the API like any agent script: it imports the schemas for its tool definitions and
nothing else of the service, so it can run on another machine (`python -m agentmcp`).
"""
