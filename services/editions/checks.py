"""Which tasks can go in an edition (docs/api.md §21): the rules of proposing, which sending an edition checks
again when it claims its send (services/editions/sending.py), so no task reaches readers twice.
"""

from models.editions import holders
from models.live import TaskLive
from models.review import ReviewTask
from rules.vocabulary import EDITION_HOLDS, LIVE_TAKEN
from services.errors import Conflict
from services.publishing.jobs import last_draft_job


def refusals(account: str, task_ids: list[str], besides: int | None) -> dict[str, list[str]]:
    """{task id: [why it cannot go in this edition]} (docs/api.md §21); empty when all can."""
    tasks = {task.task_id: task for task in ReviewTask.select().where(ReviewTask.task_id.in_(task_ids))}
    lives = {row.task_id: row for row in TaskLive.select().where(TaskLive.task.in_([t.id for t in tasks.values()]))}
    held = holders(EDITION_HOLDS, task_ids, account, besides)
    refused: dict[str, list[str]] = {}
    for task_id in task_ids:
        task = tasks.get(task_id)
        live = lives.get(task.id) if task is not None else None
        if task is None:
            why = "no such task"
        elif task.public_account != account:
            why = f"belongs to account {task.public_account}"
        elif task.content_type != "article":
            why = "an image post goes live alone (go-live), not in an edition"
        elif task.status != "published" or last_draft_job(task) is None:
            why = f"is {task.status}, without a platform draft: publish it first"
        elif live is not None and live.status in LIVE_TAKEN:
            why = "is already live" if live.status == "live" else f"is going live ({live.status})"
        elif task_id in held:
            why = f"is in edition {held[task_id].edition_id}"
        else:
            continue
        refused[task_id] = [why]
    return refused


def refusal_words(refused: dict[str, list[str]]) -> str:
    """How refusals read in a 409 and in an edition's fail_detail, "<task id> <why>; …" (docs/api.md §21)."""
    return "; ".join(f"{task_id} {why[0]}" for task_id, why in refused.items())


def check_tasks(account: str, task_ids: list[str], besides: int | None = None) -> None:
    if refused := refusals(account, task_ids, besides):
        raise Conflict("these tasks cannot go in the edition: " + refusal_words(refused), refused)
