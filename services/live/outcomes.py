"""Where a task's article stands on its way to readers, and who hears when that changes (docs/api.md §18).

Every change of a TaskLive row goes through `record()`, inside the caller's `immediate()`: the row,
the task's version (its JSON changed), and on `live`/`failed` the agent's webhook and the team's
message, written in the same transaction.
"""
from typing import Any

from models.live import TaskLive
from models.review import ReviewTask
from rules.ids import now_iso
from services.review import save_task
from services.review.webhooks import enqueue_live_outcome
from services.settings.team import TeamSettings
from services.team.outbox import live_ended

# freepublish/get's and the event's publish_status (docs/api.md §18): 0 live, 1 still publishing.
STATUS_REASONS = {
    2: "the original-content declaration failed (publish_status 2)",
    3: "the platform reported a general failure (publish_status 3)",
    4: "refused by the platform's review (publish_status 4)",
    5: "deleted by the account (publish_status 5)",
    6: "banned by the platform (publish_status 6)",
}
# freepublish/submit's errcodes with a meaning a person can act on.
SUBMIT_REASONS = {
    48001: "the account may not publish through the API: freepublish needs a verified account (platform error "
           "48001)",
    53503: "the draft failed the platform's check before publishing (platform error 53503)",
    53504: "the platform asks for this draft to be published in its back office (platform error 53504)",
    53505: "the platform asks for this draft to be published in its back office (platform error 53505)",
}
UNCERTAIN = ("the service stopped while submitting this article, so it may have been submitted: check the "
             "back office's publish records before going live again")
NO_ANSWER = ("the submission got no answer ({error}), so it may have been submitted: check the back office's "
             "publish records before going live again")
NO_RESULT = ("the platform gave no result within 24 hours of the submission: check the back office's publish "
             "records")


def submit_reason(errcode: int | None, message: str) -> str:
    """One line for a refused submission: the code's meaning, or the platform's own words."""
    if errcode is None:
        return NO_ANSWER.format(error=message)
    return SUBMIT_REASONS.get(errcode) or message


def apply_status(row: TaskLive, team: TeamSettings | None, status: Any, article_id: Any = None,
                 article_url: Any = None) -> bool:
    """A publish_status from freepublish/get or the platform's event (inside immediate()); True when it
    changed the row. Only a row still `publishing` changes: a repeated or late report changes nothing."""
    if row.status != "publishing" or type(status) is not int or status == 1:
        return False
    if status == 0:
        record(row, team, status="live", article_id=str(article_id) if article_id else None,
               article_url=str(article_url) if article_url else None, live_at=now_iso(), next_poll_at=None)
    elif status in STATUS_REASONS:
        record(row, team, status="failed", fail_reason=STATUS_REASONS[status], next_poll_at=None)
    else:
        return False
    return True


def record(row: TaskLive, team: TeamSettings | None, task: ReviewTask | None = None, **changes: Any) -> TaskLive:
    """Apply `changes` to the row (inside immediate()); the task's version moves on (its JSON changed), and
    a final status is told to the agent and the team."""
    before = row.status if row.id else None
    for name, value in changes.items():
        setattr(row, name, value)
    row.updated_at = now_iso()
    row.save()
    task = task or ReviewTask.get_by_id(row.task_id)
    save_task(task)
    if row.status != before and row.status in ("live", "failed"):
        enqueue_live_outcome(task.task_id, row)
        live_ended(team, task, row)
    return row
