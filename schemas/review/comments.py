"""Readers' comments (docs/api.md §23): a task's comments as the API shows them (never a reader's openid), and
the bodies of the agent's proposal and the editor's actions."""

from marshmallow import Schema, fields, validate

from rules.limits import COMMENT_REPLY_MAX
from rules.vocabulary import PROPOSAL_STATES
from schemas.common import timestamp
from schemas.review.refs import StrictBoolean, not_blank


def _reply_text(**kwargs):
    return fields.String(validate=[validate.Length(min=1, max=COMMENT_REPLY_MAX), not_blank], **kwargs)


class ProposalSchema(Schema):
    id = fields.String(required=True)
    content = fields.String(required=True)
    createdAt = timestamp(required=True)
    state = fields.String(required=True, validate=validate.OneOf(PROPOSAL_STATES))


class CommentReplySchema(Schema):
    content = fields.String(required=True)
    createdAt = timestamp(required=True, allow_none=True)
    by = fields.String(
        required=True, allow_none=True, metadata={"description": "the editor who sent it; null: sent elsewhere"}
    )


class CommentSchema(Schema):
    id = fields.String(required=True)
    reader = fields.String(required=True, metadata={"description": "a stable pseudonym of the reader"})
    content = fields.String(required=True)
    createdAt = timestamp(required=True)
    featured = fields.Boolean(required=True)
    removed = fields.Boolean(required=True, metadata={"description": "gone from the platform's list, or deleted"})
    reply = fields.Nested(CommentReplySchema, required=True, allow_none=True)
    proposals = fields.List(fields.Nested(ProposalSchema), required=True, metadata={"description": "oldest first"})


class TaskCommentsSchema(Schema):
    comments = fields.List(fields.Nested(CommentSchema), required=True, metadata={"description": "newest first"})
    open = fields.Boolean(
        required=True, allow_none=True, metadata={"description": "as last set here; null: never set here"}
    )
    lastFetchedAt = timestamp(required=True, allow_none=True)
    lastError = fields.String(required=True, allow_none=True, metadata={"description": "the last fetch's failure"})


class ProposalBodySchema(Schema):
    content = _reply_text(required=True)


class ReplyBodySchema(Schema):
    content = _reply_text(required=True)
    proposalId = fields.String(
        load_default=None, validate=validate.Length(min=1, max=64), metadata={"description": "the proposal sent"}
    )


class FeaturedBodySchema(Schema):
    featured = StrictBoolean(required=True)


class OpenBodySchema(Schema):
    open = StrictBoolean(required=True)
