"""Agent API: create tasks, read and list them, patch elements (x-review-agent-token)."""
from functools import wraps

from flask import Blueprint, request

from blueprints.apidoc import api
from blueprints.guards import agent_required
from blueprints.review import cover_ratio, if_match_header, list_response, task_response
from schemas.review import AgentTaskListQuerySchema, CreateTaskSchema, PatchElementsSchema, TaskSchema
from services import review
from services.errors import PayloadTooLarge

bp = Blueprint("agent", __name__)
# Guards sit above the body limit and @api: 401 before 413 before 400.
CREATE_MAX_BYTES = 2 * 1024 * 1024


def body_limit(limit):
    """Refuse bodies over `limit` bytes with 413 before they are read."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if request.content_length is not None and request.content_length > limit:
                raise PayloadTooLarge(f"the body is {request.content_length} bytes; this route takes at most {limit}",
                                      {"_body": [f"larger than {limit} bytes"]})
            # Without Content-Length (chunked), read one byte past the limit to tell "exactly the
            # limit" from "more"; the body stays cached for the JSON parser.
            request.max_content_length = limit + 1
            if len(request.get_data(cache=True)) > limit:
                raise PayloadTooLarge(f"the body is larger than {limit} bytes",
                                      {"_body": [f"larger than {limit} bytes"]})
            return view(*args, **kwargs)

        return wrapper

    return decorator


@bp.post("/api/review/agent/tasks")
@agent_required
@body_limit(CREATE_MAX_BYTES)
@api(body=CreateTaskSchema, responses={201: TaskSchema}, tags=["agent"])
def create_task(body):
    """Create a review task (pending_review); honours Idempotency-Key for 24 hours."""
    status, task, replayed = review.create_task(body, request.headers.get("Idempotency-Key"))
    headers = {"Location": f"/api/review/agent/tasks/{task['id']}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return task_response(task, status, headers)


@bp.get("/api/review/agent/tasks")
@agent_required
@api(query=AgentTaskListQuerySchema, responses={200: [TaskSchema]}, tags=["agent"])
def list_tasks(query):
    """The admin list's filters and paging, plus externalContentId (e.g. status=rejected_rework)."""
    return list_response(query)


@bp.get("/api/review/agent/tasks/<task_id>")
@agent_required
@api(responses={200: TaskSchema}, tags=["agent"])
def get_task(task_id):
    """The same stored task the admin reads."""
    return task_response(review.get_task(task_id))


@bp.patch("/api/review/agent/tasks/<task_id>/elements")
@agent_required
@api(body=PatchElementsSchema, responses={200: TaskSchema}, tags=["agent"])
def patch_elements(task_id, body):
    """Change selections: any field while pending_review, only rejected fields during rework."""
    task = review.patch_elements(task_id, body, if_match=if_match_header(), cover_ratio=cover_ratio())
    return task_response(task)
