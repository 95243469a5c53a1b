"""Admin review API: list, detail, decision (publish, retry, package and delete routes join here)."""
from urllib.parse import urlencode

from flask import Blueprint, current_app, g, jsonify, request

from blueprints.apidoc import api
from blueprints.guards import admin_required
from schemas.review import DecisionSchema, TaskListQuerySchema, TaskSchema
from services import review
from services.publishing import approve_and_publish

bp = Blueprint("review", __name__)
# Guards sit above @api so credentials are checked before the body or query (401 before 400).


def if_match_header():
    """The raw If-Match value for services.review (None when absent)."""
    return request.headers.get("If-Match")


def cover_ratio():
    config = current_app.config
    return float(config["REVIEW_COVER_RATIO_MIN"]), float(config["REVIEW_COVER_RATIO_MAX"])


def task_response(task, status=200, headers=None):
    """A task (JSON, as the services return it) with `ETag: "<version>"`."""
    response = jsonify(task)
    response.status_code = status
    response.headers["ETag"] = f'"{task["version"]}"'
    response.headers.update(headers or {})
    return response


def list_response(query):
    """Bare array; `X-Total-Count`, and `Link: <...>; rel="next"` when more exist."""
    items, total, next_cursor = review.list_tasks(query)
    response = jsonify(items)
    response.headers["X-Total-Count"] = str(total)
    if next_cursor:
        args = request.args.to_dict()
        args["cursor"] = next_cursor
        response.headers["Link"] = f'<{request.base_url}?{urlencode(args)}>; rel="next"'
    return response


@bp.get("/api/review/tasks")
@admin_required("review")
@api(query=TaskListQuerySchema, responses={200: [TaskSchema]}, tags=["review"])
def list_tasks(query):
    """Tasks filtered by status (default pending_review), account and createdAt range, newest update first."""
    return list_response(query)


@bp.get("/api/review/tasks/<task_id>")
@admin_required("review")
@api(responses={200: TaskSchema}, tags=["review"])
def get_task(task_id):
    """The full stored task with selections, drafts, publish jobs and timeline."""
    return task_response(review.get_task(task_id))


@bp.post("/api/review/tasks/<task_id>/decision")
@admin_required("review")
@api(body=DecisionSchema, responses={200: TaskSchema}, tags=["review"])
def decision(task_id, body):
    """Approve (with or without publishing) or send the task back for rework; honours If-Match."""
    if body["action"] == "approve_and_publish":  # its auto_after_approval job runs in this request

        task = approve_and_publish(task_id, body, g.actor[1], dict(current_app.config),
                                   if_match=if_match_header(), cover_ratio=cover_ratio())
    else:
        task = review.decide(task_id, body, actor_name=g.actor[1], if_match=if_match_header(),
                             cover_ratio=cover_ratio())
    return task_response(task)
