"""Readers' comments of a live task (docs/api.md §23): editors and the agent read them, the agent proposes
replies, editors send them, feature, delete and open or close the comments."""

from flask import g

from blueprints.common import settings
from blueprints.guards import admin_required, agent_required
from blueprints.openapi import Blueprint
from schemas.review import (
    CommentSchema,
    FeaturedBodySchema,
    OpenBodySchema,
    ProposalBodySchema,
    ReplyBodySchema,
    TaskCommentsSchema,
)
from services.comments import actions
from services.comments.reading import task_comments

bp = Blueprint("comments", __name__)
COMMENT = "/api/review/tasks/<task_id>/comments/<comment_id>"


@bp.get("/api/review/tasks/<task_id>/comments")
@admin_required("review")
@bp.answers(200, TaskCommentsSchema)
def list_comments(task_id):
    """The task's readers' comments, newest first, with the agent's proposals (none before it went live)."""
    return task_comments(task_id)


@bp.get("/api/review/agent/tasks/<task_id>/comments")
@agent_required
@bp.answers(200, TaskCommentsSchema)
def agent_list_comments(task_id):
    """The same comments, for the agent (readers shown by pseudonym only)."""
    return task_comments(task_id)


@bp.post("/api/review/agent/tasks/<task_id>/comments/<comment_id>/proposals")
@agent_required
@bp.arguments(ProposalBodySchema)
@bp.answers(201, CommentSchema)
def propose_reply(body, task_id, comment_id):
    """Propose a reply (it never reaches readers by itself: an editor sends it); the comment."""
    return actions.propose(task_id, comment_id, body["content"]), 201


@bp.post(COMMENT + "/reply")
@admin_required("review")
@bp.arguments(ReplyBodySchema)
@bp.answers(200, CommentSchema)
def send_reply(body, task_id, comment_id):
    """Answer the reader (comment/reply/add), from a proposal or not; the comment."""
    return actions.reply(task_id, comment_id, body["content"], body["proposalId"], g.actor[1], settings())


@bp.delete(COMMENT + "/reply")
@admin_required("review")
@bp.answers(200, CommentSchema)
def delete_reply(task_id, comment_id):
    """Take the reply back (comment/reply/delete); the comment."""
    return actions.delete_reply(task_id, comment_id, g.actor[1], settings())


@bp.post(COMMENT + "/featured")
@admin_required("review")
@bp.arguments(FeaturedBodySchema)
@bp.answers(200, CommentSchema)
def set_featured(body, task_id, comment_id):
    """Feature the comment for readers or stop (comment/markelect, unmarkelect); the comment."""
    return actions.set_featured(task_id, comment_id, body["featured"], g.actor[1], settings())


@bp.delete(COMMENT)
@admin_required("review")
@bp.answers(200, CommentSchema)
def delete_comment(task_id, comment_id):
    """Delete the comment for readers (comment/delete); kept here marked removed."""
    return actions.delete(task_id, comment_id, g.actor[1], settings())


@bp.post("/api/review/tasks/<task_id>/comments/open")
@admin_required("review")
@bp.arguments(OpenBodySchema)
@bp.answers(200, TaskCommentsSchema)
def open_comments(body, task_id):
    """Open or close the article's comments (comment/open, comment/close); the task's comments."""
    return actions.set_open(task_id, body["open"], g.actor[1], settings())
