"""Admin review API: the task list, a task's detail, the decision, presence, the body preview, and the
decisions as data.
Publishing is blueprints/publishing.py's, the package download and deletion blueprints/package.py's."""

from flask import Response, g, stream_with_context

from blueprints.common import (
    LIST_HEADERS,
    TASK_HEADERS,
    if_match_header,
    list_response,
    settings,
    takes_if_match,
    task_response,
)
from blueprints.guards import admin_required, agent_or_admin
from blueprints.openapi import Blueprint
from schemas.review import (
    DatasetQuerySchema,
    DecisionSchema,
    PreviewResultSchema,
    PreviewSchema,
    TaskListQuerySchema,
    TaskSchema,
)
from schemas.review.presence import PresenceResultSchema, PresenceSchema
from services import review
from services.errors import ValidationFailed
from services.export.dataset import dataset_chunks, dataset_query
from services.publishing import approve_and_publish
from services.ratelimit import admit_body_preview
from services.review.presence import heartbeat

bp = Blueprint("review", __name__)


@bp.get("/api/review/tasks")
@admin_required("review")
@bp.arguments(TaskListQuerySchema, location="query")
@bp.answers(200, TaskSchema(many=True), headers=LIST_HEADERS)
def list_tasks(query):
    """Tasks filtered by status (default pending_review), account and createdAt range, newest update first."""
    return list_response(query)


@bp.get("/api/review/tasks/<task_id>")
@admin_required("review")
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
def get_task(task_id):
    """The full stored task with selections, drafts, publish jobs and timeline."""
    return task_response(review.get_task(task_id))


@bp.post("/api/review/tasks/<task_id>/decision")
@admin_required("review")
@bp.arguments(DecisionSchema)
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def decision(body, task_id):
    """Approve (with or without publishing) or send the task back for rework; honours If-Match."""
    if body["action"] == "approve_and_publish":  # its auto_after_approval job runs in this request
        task = approve_and_publish(task_id, body, g.actor[1], settings(), if_match=if_match_header())
    else:
        task = review.decide(task_id, body, settings(), actor_name=g.actor[1], if_match=if_match_header())
    return task_response(task)


@bp.post("/api/review/tasks/<task_id>/presence")
@admin_required("review")
@bp.arguments(PresenceSchema)
@bp.answers(200, PresenceResultSchema)
def presence(body, task_id):
    """Heartbeat of the task page: this admin has it open (editing or not), or is leaving it; answers who else does.

    The page's leave beacon (navigator.sendBeacon, docs/api.md §15) sends the same JSON as a Blob; the
    body is read as JSON whatever its Content-Type, and the session and same-origin rules are the guard's."""
    viewers = heartbeat(task_id, g.actor[1], body["editing"], settings(), leaving=body["leaving"], page=body["page"])
    return {"viewers": viewers}


@bp.post("/api/review/preview")
@admin_required("review")
@bp.arguments(PreviewSchema)
@bp.answers(200, PreviewResultSchema)
def preview(body):
    """Render Markdown with a theme (and the account's theme settings) as publishing would; nothing is saved.

    At most BODY_PREVIEWS_PER_ADMIN a minute per admin (429 with Retry-After, docs/api.md §14)."""
    admit_body_preview(g.actor[1])
    overrides = settings().theme_overrides_for(body["publicAccount"]) if body["publicAccount"] else None
    html, error = review.preview_body(body["markdown"], body["themeTemplate"], overrides)
    if error:
        raise ValidationFailed(error, {"themeTemplate": [error]})
    return {"html": html}


@bp.get("/api/review/dataset")
@agent_or_admin("review")
@bp.arguments(DatasetQuerySchema, location="query")
@bp.answers(200, media="application/x-ndjson")
def dataset(query):
    """Decided tasks as JSON Lines for training and evaluation (raw, sft, dpo, trl-dpo, kto), oldest decision first.

    What the agent offered, what the editors chose, edited and rejected (with reasons, before and after),
    and what readers did (docs/api.md §20). Streamed: any number of tasks in constant memory."""
    chosen = dataset_query(query["format"], query["from_"], query["to"], query["account"], query["limit"])
    return Response(
        stream_with_context(dataset_chunks(chosen)),
        mimetype="application/x-ndjson",
        headers={
            "Cache-Control": "no-store",
            "Content-Disposition": f'attachment; filename="dataset-{chosen.format}.jsonl"',
        },
    )
