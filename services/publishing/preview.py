"""Phone preview (docs/api.md §12): the task's current platform draft sent to one follower's phone."""

from typing import Any

from models import immediate
from models.review import task_by_id
from rules.limits import PREVIEW_WINDOW_SECONDS, PREVIEWS_PER_TASK
from services.errors import Conflict, NotFound, RateLimited
from services.platform.client import PlatformError, client_for
from services.publishing.jobs import last_draft_job
from services.publishing.pipeline import INVALID_MEDIA_ID
from services.ratelimit import SlidingWindowLimiter
from services.review import add_event, load_for_update, task_to_dict
from services.settings import Settings

# Per task, counted in the store (every process together); a send over the limit is not counted.
_LIMITER = SlidingWindowLimiter({"preview": [(PREVIEWS_PER_TASK, PREVIEW_WINDOW_SECONDS)]})


def send_preview(
    task_id: str, recipient: dict[str, str], actor_name: str | None, settings: Settings, if_match: str | None = None
) -> dict[str, Any]:
    """`recipient`: {"wechatName": …} or {"openId": …}; `if_match`: the version the reviewer looks at
    (412 when the task has moved on: its draft may not be the one they read). The platform call runs
    with no transaction open; `preview_sent` is recorded after it succeeded. Returns the task as JSON."""
    task = load_for_update(task_id, if_match)
    job = last_draft_job(task)
    if job is None:
        raise Conflict(
            "the task has no platform draft yet: publish it first, then send the preview",
            {"status": task.status},
            code="no_draft",
        )
    wait = _LIMITER.hit({"preview": task.task_id})
    if wait is not None:
        raise RateLimited(f"at most {PREVIEWS_PER_TASK} previews a minute per task; wait {wait} seconds", wait)
    media_id = str(job.draft_media_id)  # a succeeded job's draft: never null (last_draft_job's query)
    try:
        client_for(task.public_account, settings).send_preview(
            media_id, wechat_name=recipient.get("wechatName"), open_id=recipient.get("openId")
        )
    except PlatformError as exc:
        if exc.errcode == INVALID_MEDIA_ID:  # the platform removes a draft once published or sent (docs/api.md §12)
            raise Conflict(
                "the task's platform draft is gone: the platform removes a draft once it is published or sent, "
                "so there is nothing left to preview",
                {"draftMediaId": media_id},
                code="draft_gone",
            ) from None
        raise exc.refused("the preview") from None
    with immediate():
        current = task_by_id(task_id)
        if current is None:
            raise NotFound(f"task {task_id} was deleted while the preview was sent")
        add_event(
            current,
            "preview_sent",
            "admin",
            actor_name,
            {"to": recipient, "jobId": job.job_id, "draftMediaId": media_id},
        )
        return task_to_dict(current)
