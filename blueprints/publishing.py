"""Publish routes of the admin review API: publish the approved task, retry a failed job, follow a
publish in progress, send the draft to a phone, take it live to readers."""

from flask import g

from blueprints.bodies import no_body
from blueprints.common import TASK_HEADERS, if_match_header, settings, takes_if_match, task_response
from blueprints.guards import admin_required, agent_or_admin
from blueprints.openapi import Blueprint
from schemas.review import GoLiveSchema, PhonePreviewSchema, PublishProgressSchema, TaskSchema, TaskStatsSchema
from services.live import cancel_go_live, go_live
from services.publishing import publish_progress, publish_task, retry_job, send_preview
from services.stats import task_stats

bp = Blueprint("publishing", __name__)


@bp.post("/api/review/tasks/<task_id>/publish-jobs")
@admin_required("review")
@no_body
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def create_publish_job(task_id):
    """Publish the approved task as a platform draft within the request; the task gains one job."""
    task = publish_task(task_id, "manual", g.actor[1], settings(), if_match=if_match_header())
    return task_response(task)


@bp.post("/api/review/tasks/<task_id>/publish-jobs/<job_id>/retry")
@admin_required("review")
@no_body
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def retry_publish_job(task_id, job_id):
    """Publish a failed job's snapshot again as a new job (attemptCount + 1, retryOf)."""
    task = retry_job(task_id, job_id, g.actor[1], settings(), if_match=if_match_header())
    return task_response(task)


@bp.get("/api/review/tasks/<task_id>/publish-progress")
@admin_required("review")
@bp.answers(200, PublishProgressSchema)
def get_publish_progress(task_id):
    """What a running publish of the task is doing (uploading images k of n, saving the draft); the page polls it."""
    return publish_progress(task_id)


@bp.post("/api/review/tasks/<task_id>/preview")
@admin_required("review")
@bp.arguments(PhonePreviewSchema)
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def send_phone_preview(body, task_id):
    """Send the task's current platform draft to one WeChat user's phone (409 no_draft before a publish)."""
    return task_response(send_preview(task_id, body, g.actor[1], settings(), if_match=if_match_header()))


@bp.post("/api/review/tasks/<task_id>/go-live")
@admin_required("review")
@bp.arguments(GoLiveSchema)
@bp.answers(202, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def request_go_live(body, task_id):
    """Publish the task's platform draft to readers now, or at `at` (docs/api.md §18); the task carries `live`."""
    return task_response(go_live(task_id, body["at"], g.actor[1], settings(), if_match=if_match_header()), 202)


@bp.delete("/api/review/tasks/<task_id>/go-live")
@admin_required("review")
@bp.answers(200, TaskSchema, headers=TASK_HEADERS)
@takes_if_match
def cancel_scheduled_go_live(task_id):
    """Cancel a scheduled going live (409 once it is submitted)."""
    return task_response(cancel_go_live(task_id, settings(), if_match=if_match_header(), actor_name=g.actor[1]))


@bp.get("/api/review/tasks/<task_id>/stats")
@agent_or_admin("review")
@bp.answers(200, TaskStatsSchema)
def get_task_stats(task_id):
    """What readers did: the live article's figures per day (ascending) and in total (docs/api.md §19)."""
    return task_stats(task_id)
