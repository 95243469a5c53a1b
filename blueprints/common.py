"""What several blueprints share: the app's settings, If-Match, the task answers and plain-text answers."""

from urllib.parse import urlencode

from flask import Response, current_app, jsonify, request
from flask_smorest import Blueprint

from services import review
from services.settings import Settings


def settings() -> Settings:
    """The settings checked and typed at start (app.py); the one way views hand them to services."""
    return current_app.extensions["settings"]


def if_match_header():
    """The raw If-Match value for services.review (None when absent)."""
    return request.headers.get("If-Match")


def text_response(body: str, status: int = 200) -> Response:
    """Plain text, as the chat apps and the platform read their callbacks' answers."""
    return Response(body, status=status, content_type="text/plain; charset=utf-8")


def task_response(task, status=200, headers=None):
    """A task (JSON, as the services return it) with `ETag: "<version>"`."""
    return jsonify(task), status, {"ETag": f'"{task["version"]}"', **(headers or {})}


def list_response(query):
    """Bare array; `X-Total-Count`, and `Link: <...>; rel="next"` when more exist."""
    items, total, next_cursor = review.list_tasks(query)
    headers = {"X-Total-Count": str(total)}
    if next_cursor:
        args = {**request.args.to_dict(), "cursor": next_cursor}
        headers["Link"] = f'<{request.base_url}?{urlencode(args)}>; rel="next"'
    return jsonify(items), headers


# What task_response and list_response send, as the document names them (blueprints/openapi.py).
TASK_HEADERS = {"ETag": "ETag"}
LIST_HEADERS = {"X-Total-Count": "X-Total-Count", "Link": "Link"}
takes_if_match = Blueprint.doc(parameters=["If-Match"])  # a route that reads if_match_header()
