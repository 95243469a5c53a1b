"""Publish routes of the admin review API: publish the approved task, retry a failed job."""
from flask import Blueprint, g

from blueprints.apidoc import api
from blueprints.common import if_match_header, settings, task_response
from blueprints.guards import admin_required
from schemas.review import TaskSchema
from services.publishing import publish_task, retry_job

bp = Blueprint("publishing", __name__)


@bp.post("/api/review/tasks/<task_id>/publish-jobs")
@admin_required("review")
@api(responses={200: TaskSchema}, tags=["review"], no_body=True)
def create_publish_job(task_id):
    """Publish the approved task as a platform draft within the request; the task gains one job."""
    task = publish_task(task_id, "manual", g.actor[1], settings(), if_match=if_match_header())
    return task_response(task)


@bp.post("/api/review/tasks/<task_id>/publish-jobs/<job_id>/retry")
@admin_required("review")
@api(responses={200: TaskSchema}, tags=["review"], no_body=True)
def retry_publish_job(task_id, job_id):
    """Publish a failed job's snapshot again as a new job (attemptCount + 1, retryOf)."""
    task = retry_job(task_id, job_id, g.actor[1], settings(), if_match=if_match_header())
    return task_response(task)
