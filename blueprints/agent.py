"""Agent API: create tasks, read and list them, patch elements (x-review-agent-token)."""

from flask import request

from blueprints.common import (
    LIST_HEADERS,
    TASK_HEADERS,
    if_match_header,
    list_response,
    settings,
    takes_if_match,
    task_response,
)
from blueprints.guards import agent_required
from blueprints.openapi import Blueprint
from schemas.review import AgentTaskListQuerySchema, CreateTaskSchema, PatchElementsSchema, TaskSchema
from services import review

bp = Blueprint("agent", __name__)


@bp.post("/api/review/agent/tasks")
@agent_required
@bp.arguments(CreateTaskSchema)
@bp.answers(
    201, TaskSchema, headers={**TASK_HEADERS, "Location": "Location", "Idempotent-Replayed": "Idempotent-Replayed"}
)
@bp.doc(parameters=["Idempotency-Key"])
def create_task(body):
    """Create a review task (pending_review); honours Idempotency-Key (see its header)."""
    status, task, replayed = review.create_task(body, request.headers.get("Idempotency-Key"), settings().team)
    headers = {"Location": f"/api/review/agent/tasks/{task['id']}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return task_response(task, status, headers)


@bp.get("/api/review/agent/tasks")
@agent_required
@bp.arguments(AgentTaskListQuerySchema, location="query")
@bp.answers(200, TaskSchema(many=True), headers=LIST_HEADERS)
def list_tasks(query):
    """The admin list's filters and paging, plus externalContentId (e.g. status=rejected_rework)."""
    return list_response(query)


@bp.get("/api/review/agent/tasks/<task_id>")
@agent_required
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
def get_task(task_id):
    """The same stored task the admin reads."""
    return task_response(review.get_task(task_id))


@bp.patch("/api/review/agent/tasks/<task_id>/elements")
@agent_required
@bp.arguments(PatchElementsSchema)
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def patch_elements(body, task_id):
    """Change selections: any field while pending_review, only rejected fields during rework.

    A task rejected as a whole (`rejectedElements` empty) takes any field, and its first valid PATCH
    returns it to review. In a field-level rework, each rejected field a PATCH fixes must be ready for
    approval (the approval limits of each field's description apply), and the PATCH
    that fixes the last one runs the whole approval check; errors then name `selections.<field>`.
    Images a PATCH brings in (coverImage, bodyImages, images, image links in body) are material-library
    assets (GET /api/assets?scope=library); images the task already holds may stay. Send the ETag
    you read as If-Match.
    """
    task = review.patch_elements(task_id, body, settings(), if_match=if_match_header())
    return task_response(task)
