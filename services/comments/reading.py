"""Reading the comments (docs/api.md §23): a task's, newest first, and those not answered yet across tasks.
Every answer is built here, and none carries a reader's openid: `reader` is the pseudonym."""

import hashlib
import hmac
from typing import Any

from models.comments import CommentFetch, CommentProposal, ReaderComment
from models.review import ReviewTask
from services.review.concurrency import get_task_row


def pseudonym(secret_key: str, account: str, openid: str) -> str:
    """A reader's stable short name: the first 8 hex digits of HMAC-SHA256 under the instance's key."""
    message = (account + "\x1f" + openid).encode("utf-8")
    return hmac.new(secret_key.encode("utf-8"), message, hashlib.sha256).hexdigest()[:8]


def proposal_dict(row: CommentProposal) -> dict[str, Any]:
    return {"id": row.proposal_id, "content": row.content, "createdAt": row.created_at, "state": row.state}


def comment_dict(row: ReaderComment, proposals: list[CommentProposal]) -> dict[str, Any]:
    """One comment as the API shows it (the openid stays in the row)."""
    reply = None
    if row.reply_content is not None:
        reply = {"content": row.reply_content, "createdAt": row.reply_created_at, "by": row.reply_by}
    return {
        "id": row.comment_id,
        "reader": row.reader,
        "content": row.content,
        "createdAt": row.created_at,
        "featured": row.featured,
        "removed": row.removed,
        "reply": reply,
        "proposals": [proposal_dict(proposal) for proposal in proposals],
    }


def _with_proposals(rows: list[ReaderComment]) -> list[dict[str, Any]]:
    """The comments with their proposals, oldest proposal first: one query for all of them."""
    by_comment: dict[int, list[CommentProposal]] = {row.id: [] for row in rows}
    if rows:
        for proposal in (
            CommentProposal.select()
            .where(CommentProposal.comment.in_(list(by_comment)))
            .order_by(CommentProposal.created_at, CommentProposal.id)
        ):
            by_comment[proposal.comment_id].append(proposal)
    return [comment_dict(row, by_comment[row.id]) for row in rows]


def one_comment(row: ReaderComment) -> dict[str, Any]:
    return _with_proposals([row])[0]


def task_comments(task_id: str) -> dict[str, Any]:
    """{"comments", "open", "lastFetchedAt", "lastError"} of a task, newest first (404: no such task). A task
    that never went live has none; `open` is null until comments are opened or closed here."""
    task = get_task_row(task_id)
    rows = list(
        ReaderComment.select()
        .where(ReaderComment.task == task)
        .order_by(ReaderComment.created_at.desc(), ReaderComment.user_comment_id.desc())
    )
    fetch = CommentFetch.get_or_none(CommentFetch.task == task)
    return {
        "comments": _with_proposals(rows),
        "open": fetch.open if fetch is not None else None,
        "lastFetchedAt": fetch.last_fetched_at if fetch is not None else None,
        "lastError": fetch.last_error if fetch is not None else None,
    }


def unanswered(limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
    """The comments not answered yet and not removed, across tasks and accounts, oldest first; each with its
    task's taskId, topic and account."""
    rows = list(
        ReaderComment.select(ReaderComment, ReviewTask.task_id, ReviewTask.topic)
        .join(ReviewTask)
        .where(ReaderComment.reply_content.is_null() & (ReaderComment.removed == False))  # noqa: E712 - SQL
        .order_by(ReaderComment.created_at, ReaderComment.id)
        .limit(limit)
        .offset(offset)
    )
    return [
        {**comment, "taskId": row.task.task_id, "topic": row.task.topic, "account": row.account}
        for comment, row in zip(_with_proposals(rows), rows, strict=True)
    ]
