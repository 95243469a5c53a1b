"""Admin review API: the task list, a task's detail, the decision, presence, and the decisions as data.
Publishing is blueprints/publishing.py's, the package download and deletion blueprints/package.py's."""
from flask import Blueprint, Response, g, stream_with_context

from blueprints.apidoc import api
from blueprints.common import if_match_header, list_response, settings, task_response
from blueprints.guards import admin_required, agent_or_admin
from schemas.review import DatasetQuerySchema, DecisionSchema, TaskListQuerySchema, TaskSchema
from schemas.review.presence import PresenceResultSchema, PresenceSchema
from services import review
from services.export.dataset import dataset_chunks, dataset_query
from services.publishing import approve_and_publish
from services.review.presence import heartbeat

bp = Blueprint("review", __name__)
# Guards sit above @api so credentials are checked before the body or query (401 before 400).


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

        task = approve_and_publish(task_id, body, g.actor[1], settings(), if_match=if_match_header())
    else:
        task = review.decide(task_id, body, settings(), actor_name=g.actor[1], if_match=if_match_header())
    return task_response(task)


@bp.post("/api/review/tasks/<task_id>/presence")
@admin_required("review")
@api(body=PresenceSchema, responses={200: PresenceResultSchema}, tags=["review"])
def presence(task_id, body):
    """Heartbeat of the task page: this admin has it open (editing or not), or is leaving it; answers who else does.

    The page's leave beacon (navigator.sendBeacon, docs/api.md §15) sends the same JSON as a Blob; the
    body is read as JSON whatever its Content-Type, and the session and same-origin rules are the guard's."""
    return {"viewers": heartbeat(task_id, g.actor[1], body["editing"], settings(), leaving=body["leaving"])}


@bp.get("/api/review/dataset")
@agent_or_admin("review")
@api(query=DatasetQuerySchema, responses={200: "application/x-ndjson"}, tags=["review", "agent"])
def dataset(query):
    """Decided tasks as JSON Lines for training and evaluation (raw, sft, dpo, kto), oldest decision first.

    What the agent offered, what the editors chose, edited and rejected (with reasons, before and after),
    and what readers did (docs/api.md §20). Streamed: any number of tasks in constant memory."""
    chosen = dataset_query(query["format"], query["from_"], query["to"], query["account"], query["limit"])
    return Response(stream_with_context(dataset_chunks(chosen)), mimetype="application/x-ndjson",
                    headers={"Cache-Control": "no-store",
                             "Content-Disposition": f'attachment; filename="dataset-{chosen.format}.jsonl"'})
