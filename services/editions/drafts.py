"""The edition's combined draft (docs/api.md §21): one draft/add of the tasks' own drafts, in order."""

from typing import Any

from models.review import ReviewTask
from services.platform.client import PlatformClient, PlatformError
from services.publishing.jobs import last_draft_job
from services.publishing.pipeline import INVALID_MEDIA_ID

# What draft/add takes of what draft/get gives (url and thumb_url are the platform's own).
ARTICLE_FIELDS = (
    "title",
    "author",
    "digest",
    "content",
    "content_source_url",
    "thumb_media_id",
    "need_open_comment",
    "only_fans_can_comment",
    "pic_crop_235_1",
    "pic_crop_1_1",
)


def draft_ids(task_ids: list[str]) -> list[str]:
    """Each task's platform draft, in order; LookupError naming a task that has none."""
    tasks = {task.task_id: task for task in ReviewTask.select().where(ReviewTask.task_id.in_(task_ids))}
    found = []
    for task_id in task_ids:
        job = last_draft_job(tasks[task_id]) if task_id in tasks else None
        if job is None or not job.draft_media_id:
            raise LookupError(f"task {task_id} has no platform draft")
        found.append(str(job.draft_media_id))
    return found


class DraftGone(LookupError):
    """A task's draft the platform removed, since it was published or sent (docs/api.md §21)."""

    def __init__(self, task_id: str):
        super().__init__(
            f"task {task_id}'s platform draft is gone: the platform removes a draft once it is published or sent"
        )
        self.task_id = task_id


def combined_draft(client: PlatformClient, task_ids: list[str]) -> str:
    """A new draft holding each task's draft article exactly as the platform keeps it -> its media_id."""
    articles: list[dict[str, Any]] = []
    for task_id, media_id in zip(task_ids, draft_ids(task_ids), strict=True):
        try:
            answer = client.get_draft(media_id)
        except PlatformError as exc:
            if exc.errcode == INVALID_MEDIA_ID:
                raise DraftGone(task_id) from None
            raise
        items = answer.get("news_item")
        if not isinstance(items, list) or not items or not isinstance(items[0], dict):
            raise PlatformError(None, f"platform error: draft/get of {media_id} answered without its article")
        articles.append({key: items[0][key] for key in ARTICLE_FIELDS if key in items[0]})
    return client.add_draft(articles)
