"""What the /editions page shows (docs/api.md §21): per account, the articles that can go in an edition,
the edition being composed, the editions sent or on their way, and the quota left. Read only: every change
goes through /api/editions, so the rules stay in services/editions/__init__.py.
"""

from typing import Any

from models.editions import Edition, holders
from models.live import TaskLive
from models.review import PublishJob, ReviewTask
from rules.vocabulary import EDITION_HOLDS, EDITION_MAX_ARTICLES, LIVE_TAKEN
from services import editions
from services.asset_refs import resolve_many
from services.settings import Settings

CANDIDATES_SHOWN = 100  # the newest draft-ready articles of an account
EDITIONS_SHOWN = 30  # the account's newest editions in the list


def _articles(tasks: list[ReviewTask]) -> dict[str, dict[str, Any]]:
    """{task id: {"id", "title", "summary", "cover", "updatedAt"}}: the selected title and cover (an asset's
    URL, or None when the cover is no asset: the page never loads an address the agent wrote)."""
    selections = [task.selections or {} for task in tasks]
    covers = resolve_many([chosen.get("coverImage") for chosen in selections])
    return {
        task.task_id: {
            "id": task.task_id,
            "title": str(chosen.get("title") or task.topic),
            "summary": str(chosen.get("summary") or ""),
            "topic": task.topic,
            "cover": covers[index].url if covers[index] is not None else None,
            "updatedAt": task.updated_at,
        }
        for index, (task, chosen) in enumerate(zip(tasks, selections, strict=True))
    }


def draft_ready(account: str) -> list[dict[str, Any]]:
    """The account's articles that can join an edition (as POST /api/editions checks them): published with a
    platform draft, not live nor going live, in no other edition that is draft, scheduled or sending.
    Newest first; the tasks of the edition being composed are the composer's, not listed here."""
    with_draft = PublishJob.select(PublishJob.task).where(
        (PublishJob.status == "succeeded") & PublishJob.draft_media_id.is_null(False)
    )
    going = TaskLive.select(TaskLive.task).where(TaskLive.status.in_(LIVE_TAKEN))
    tasks = list(
        ReviewTask.select()
        .where(
            (ReviewTask.public_account == account)
            & (ReviewTask.content_type == "article")
            & (ReviewTask.status == "published")
            & ReviewTask.id.in_(with_draft)
            & ReviewTask.id.not_in(going)
        )
        .order_by(ReviewTask.updated_at.desc(), ReviewTask.id.desc())
        .limit(CANDIDATES_SHOWN + 8 * 4)
    )
    held = holders(EDITION_HOLDS, None, account)
    chosen = [task for task in tasks if task.task_id not in held][:CANDIDATES_SHOWN]
    articles = _articles(chosen)
    return [articles[task.task_id] for task in chosen]


def _with_articles(edition: dict[str, Any], known: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The edition's dict with each article's title and cover, and why it failed in the page's language."""
    articles = []
    for article in edition["articles"]:
        task_id = article["taskId"]
        unknown = {"id": task_id, "title": task_id, "summary": "", "topic": "", "cover": None, "updatedAt": None}
        articles.append({**(known.get(task_id) or unknown), **article})
    failure = editions.failure_words(edition["id"]) if edition["status"] == "failed" else None
    words, unsent = failure or (None, False)
    return {**edition, "articles": articles, "failureWords": words, "nothingSent": unsent}


def page_data(account: str, settings: Settings, edition_id: str | None = None) -> dict[str, Any]:
    """Everything /editions shows for one account: {"candidates", "composing" (the draft edition being
    composed, `edition_id`'s or the newest draft, or None), "editions" (newest first), "quota"}."""
    listed = editions.list_editions(account, None)[:EDITIONS_SHOWN]
    drafts = [edition for edition in listed if edition["status"] == "draft"]
    composing = next((edition for edition in drafts if edition["id"] == edition_id), drafts[0] if drafts else None)
    if edition_id and (composing is None or composing["id"] != edition_id):
        asked = Edition.get_or_none(
            (Edition.edition_id == edition_id) & (Edition.account == account) & (Edition.status == "draft")
        )
        composing = editions.get_edition(asked.edition_id) if asked is not None else composing
    task_ids = {task_id for edition in listed for task_id in edition["taskIds"]}
    if composing is not None:
        task_ids.update(composing["taskIds"])
    known = _articles(list(ReviewTask.select().where(ReviewTask.task_id.in_(sorted(task_ids))))) if task_ids else {}
    return {
        "candidates": draft_ready(account),
        "composing": _with_articles(composing, known) if composing else None,
        "editions": [_with_articles(edition, known) for edition in listed],
        "quota": editions.quota_left(account, settings),
    }


def task_offer(task: dict[str, Any], settings: Settings) -> dict[str, Any] | None:
    """What the task page offers to reach followers (docs/api.md §18 "Pages", §21): for a published article
    not live nor going live, {"holding": the edition that holds it (draft, scheduled or sending) or None,
    "composing": the account's newest draft edition it could join (None when there is none or it is full),
    "quota": the sends left}; None for anything else, which no edition takes."""
    live = task.get("live") or {}
    if task["contentType"] != "article" or task["status"] != "published" or live.get("status") in LIVE_TAKEN:
        return None
    account = task["publicAccount"]
    holding = holders(EDITION_HOLDS, [task["id"]], account).get(task["id"])
    newest = (
        Edition.select()
        .where((Edition.account == account) & (Edition.status == "draft"))
        .order_by(Edition.id.desc())
        .first()
    )
    composing = newest if newest is not None and len(newest.task_ids or []) < EDITION_MAX_ARTICLES else None
    return {
        "holding": editions.edition_to_dict(holding) if holding is not None else None,
        "composing": editions.edition_to_dict(composing) if composing is not None and holding is None else None,
        "quota": editions.quota_left(account, settings),
    }
