"""What the agent and editors do with a comment (docs/api.md §23). The agent only proposes; an editor's reply,
feature, delete and open/close go to the platform first, outside the write lock, and are recorded here (with
who did it, in the task's timeline) only when the platform took them: a refusal changes nothing."""

from collections.abc import Callable
from typing import Any

from flask_babel import force_locale

from models import immediate
from models.comments import CommentFetch, CommentProposal, ReaderComment
from models.live import TaskLive
from models.review import ReviewTask
from rules.ids import new_id, now_iso
from rules.labels import COMMENT_ERROR_LABELS
from services.comments.articles import Article, article_of
from services.comments.reading import one_comment, task_comments
from services.errors import Conflict, NotFound, PlatformRefused, ValidationFailed
from services.platform.client import PlatformClient, PlatformError, client_for
from services.review.concurrency import get_task_row
from services.review.timeline import add_event
from services.settings import Settings


def refusal_words(exc: PlatformError) -> str:
    """The refusal in words: 88000-88002 by their meaning (rules/labels.py), others by the platform's own."""
    label = COMMENT_ERROR_LABELS.get(exc.errcode) if exc.errcode is not None else None
    if label is None:
        return str(exc)
    with force_locale("en"):
        return f"{label} (platform error {exc.errcode})"


def _live(task_id: str) -> tuple[ReviewTask, Article]:
    """The task and its article; 404 for no such task, 409 not_live for a task that is not live."""
    task = get_task_row(task_id)
    article = article_of(TaskLive.get_or_none(TaskLive.task == task))
    if article is None:
        raise Conflict(f"task {task_id} is not live: it has no readers' comments", code="not_live")
    return task, article


def _comment(task_id: str, comment_id: str) -> tuple[ReviewTask, Article, ReaderComment]:
    task, article = _live(task_id)
    comment = ReaderComment.get_or_none((ReaderComment.comment_id == comment_id) & (ReaderComment.task == task))
    if comment is None:
        raise NotFound(f"task {task_id} has no comment {comment_id}")
    return task, article, comment


def _ask(settings: Settings, article: Article, what: str, call: Callable[[PlatformClient], Any]) -> None:
    """One platform call; a refusal is the 502 platform_error with its reason in words, nothing changed."""
    try:
        call(client_for(article.account, settings))
    except PlatformError as exc:
        raise PlatformRefused(
            f"the platform refused {what}: {refusal_words(exc)}", {"errcode": exc.errcode, "errmsg": exc.errmsg}
        ) from None


def propose(task_id: str, comment_id: str, content: str) -> dict[str, Any]:
    """The agent proposes a reply (1-1,000 characters, the schema's): kept here, never sent by itself."""
    task, _article, comment = _comment(task_id, comment_id)
    with immediate():
        proposal = CommentProposal.create(
            proposal_id=new_id("cp_"), comment=comment, content=content, created_at=now_iso(), state="proposed"
        )
        add_event(
            task, "comment_reply_proposed", "agent", None, {"commentId": comment_id, "proposalId": proposal.proposal_id}
        )
    return one_comment(comment)


def reply(
    task_id: str, comment_id: str, content: str, proposal_id: str | None, admin: str, settings: Settings
) -> dict[str, Any]:
    """An editor answers the reader (comment/reply/add). The proposal named becomes `sent`, or `edited` when
    the text differs; the comment's other proposals still waiting become `discarded` (not chosen)."""
    task, article, comment = _comment(task_id, comment_id)
    proposal = None
    if proposal_id is not None:
        proposal = CommentProposal.get_or_none(
            (CommentProposal.proposal_id == proposal_id) & (CommentProposal.comment == comment)
        )
        if proposal is None:
            raise ValidationFailed(
                f"comment {comment_id} has no proposal {proposal_id}", {"proposalId": ["no such proposal"]}
            )
    _ask(
        settings,
        article,
        "the reply",
        lambda client: client.reply_comment(article.msg_data_id, article.index, comment.user_comment_id, content),
    )
    now = now_iso()
    with immediate():
        ReaderComment.update(reply_content=content, reply_created_at=now, reply_by=admin, acted_at=now).where(
            ReaderComment.id == comment.id
        ).execute()
        if proposal is not None:  # spaces and line breaks at the ends are no editor's change
            state = "sent" if proposal.content.strip() == content.strip() else "edited"
            CommentProposal.update(state=state).where(CommentProposal.id == proposal.id).execute()
        CommentProposal.update(state="discarded").where(
            (CommentProposal.comment == comment)
            & (CommentProposal.state == "proposed")
            & (CommentProposal.id != (proposal.id if proposal is not None else 0))
        ).execute()
        data = {"commentId": comment_id, **({"proposalId": proposal_id} if proposal_id else {})}
        add_event(task, "comment_replied", "admin", admin, data)
    return one_comment(ReaderComment.get_by_id(comment.id))


def _change(
    task_id: str,
    comment_id: str,
    admin: str,
    settings: Settings,
    what: str,
    call: Callable[[PlatformClient, Article, ReaderComment], Any],
    changes: dict[Any, Any],
    event: str,
) -> dict[str, Any]:
    """The platform is asked first; only once it agreed are the comment's `changes` and the timeline's
    `event` written (a refusal changes nothing here)."""
    task, article, comment = _comment(task_id, comment_id)
    _ask(settings, article, what, lambda client: call(client, article, comment))
    with immediate():
        ReaderComment.update({**changes, ReaderComment.acted_at: now_iso()}).where(
            ReaderComment.id == comment.id
        ).execute()
        add_event(task, event, "admin", admin, {"commentId": comment_id})
    return one_comment(ReaderComment.get_by_id(comment.id))


def delete_reply(task_id: str, comment_id: str, admin: str, settings: Settings) -> dict[str, Any]:
    """An editor takes the reply back (comment/reply/delete); the proposals keep their states."""
    return _change(
        task_id,
        comment_id,
        admin,
        settings,
        "deleting the reply",
        lambda client, article, comment: client.delete_reply(
            article.msg_data_id, article.index, comment.user_comment_id
        ),
        {ReaderComment.reply_content: None, ReaderComment.reply_created_at: None, ReaderComment.reply_by: None},
        "comment_reply_deleted",
    )


def set_featured(task_id: str, comment_id: str, featured: bool, admin: str, settings: Settings) -> dict[str, Any]:
    """Feature the comment or stop featuring it (comment/markelect, comment/unmarkelect)."""
    return _change(
        task_id,
        comment_id,
        admin,
        settings,
        "featuring the comment" if featured else "unfeaturing the comment",
        lambda client, article, comment: (client.mark_elect if featured else client.unmark_elect)(
            article.msg_data_id, article.index, comment.user_comment_id
        ),
        {ReaderComment.featured: featured},
        "comment_featured" if featured else "comment_unfeatured",
    )


def delete(task_id: str, comment_id: str, admin: str, settings: Settings) -> dict[str, Any]:
    """Delete the comment for readers (comment/delete): kept here, marked removed."""
    return _change(
        task_id,
        comment_id,
        admin,
        settings,
        "deleting the comment",
        lambda client, article, comment: client.delete_comment(
            article.msg_data_id, article.index, comment.user_comment_id
        ),
        {ReaderComment.removed: True},
        "comment_deleted",
    )


def set_open(task_id: str, open_: bool, admin: str, settings: Settings) -> dict[str, Any]:
    """Open or close the article's comments (comment/open, comment/close): the task's comments answer."""
    task, article = _live(task_id)

    def call(client: PlatformClient) -> None:
        (client.open_comments if open_ else client.close_comments)(article.msg_data_id, article.index)

    _ask(settings, article, "opening the comments" if open_ else "closing the comments", call)
    now = now_iso()
    with immediate():
        changed = CommentFetch.update(open=open_, updated_at=now).where(CommentFetch.task == task).execute()
        if not changed:
            CommentFetch.insert(
                task=task,
                account=article.account,
                msg_data_id=article.msg_data_id,
                article_index=article.index,
                open=open_,
                status="idle",
                next_at=now,
                updated_at=now,
            ).on_conflict_ignore().execute()
        add_event(task, "comments_opened" if open_ else "comments_closed", "admin", admin, {})
    return task_comments(task_id)
