"""The webhooks sent to the agent (docs/api.md §4, §13): one body schema per event type, written by
services.review.webhooks and described under the OpenAPI document's `x-webhooks`."""

from marshmallow import Schema, fields, validate

from rules.vocabulary import ALL_ELEMENT_KEYS, APPROVE_ACTIONS, CONTENT_TYPES, REJECTION_REASONS, TRIGGER_MODES
from schemas.common import account, timestamp
from schemas.review.stats import StatsFiguresSchema


class TaskEventDataSchema(Schema):
    taskId = fields.String(attribute="task_id", required=True)


class RejectionDataSchema(TaskEventDataSchema):
    publicAccount = account(attribute="public_account", required=True)
    contentType = fields.String(attribute="content_type", required=True, validate=validate.OneOf(CONTENT_TYPES))
    topic = fields.String(required=True)
    rejectedElements = fields.List(
        fields.String(validate=validate.OneOf(ALL_ELEMENT_KEYS)),
        attribute="rejected_elements",
        required=True,
        metadata={"description": "empty: the whole task"},
    )
    rejectionReason = fields.String(
        attribute="rejection_reason", required=True, validate=validate.OneOf(REJECTION_REASONS)
    )
    rejectionNote = fields.String(attribute="rejection_note", required=True, allow_none=True)


class ApprovalDataSchema(TaskEventDataSchema):
    publicAccount = account(attribute="public_account", required=True)
    contentType = fields.String(attribute="content_type", required=True, validate=validate.OneOf(CONTENT_TYPES))
    topic = fields.String(required=True)
    action = fields.String(required=True, validate=validate.OneOf(APPROVE_ACTIONS))


class PublishedDataSchema(TaskEventDataSchema):
    jobId = fields.String(attribute="job_id", required=True)
    draftMediaId = fields.String(attribute="draft_media_id", required=True)
    triggerMode = fields.String(attribute="trigger_mode", required=True, validate=validate.OneOf(TRIGGER_MODES))


class PublishFailedDataSchema(TaskEventDataSchema):
    jobId = fields.String(attribute="job_id", required=True)
    lastError = fields.String(attribute="last_error", required=True)
    attemptCount = fields.Integer(attribute="attempt_count", required=True)


class LiveDataSchema(TaskEventDataSchema):
    articleUrl = fields.String(attribute="article_url", required=True, allow_none=True)
    articleId = fields.String(attribute="article_id", required=True, allow_none=True)
    failReason = fields.String(attribute="fail_reason", required=True, allow_none=True)
    via = fields.String(required=True, metadata={"description": "freepublish (go-live) or mass_send (an edition)"})
    editionId = fields.String(attribute="edition_id", required=True, allow_none=True)


class StatsDataSchema(TaskEventDataSchema):
    date = fields.String(required=True, metadata={"format": "date", "description": "the day these figures are of"})
    day = fields.Nested(StatsFiguresSchema, required=True)
    totals = fields.Nested(StatsFiguresSchema, required=True, metadata={"description": "over every day fetched so far"})


class NewCommentSchema(Schema):
    id = fields.String(attribute="comment_id", required=True)
    reader = fields.String(required=True, metadata={"description": "the reader's pseudonym (never the openid)"})
    content = fields.String(required=True)
    createdAt = timestamp(attribute="created_at", required=True)


class CommentsDataSchema(TaskEventDataSchema):
    comments = fields.List(fields.Nested(NewCommentSchema), required=True, metadata={"description": "oldest first"})


def _webhook(event_type: str, data: type[Schema], doc: str) -> type[Schema]:
    body = {
        "type": fields.String(required=True, validate=validate.OneOf([event_type])),
        "timestamp": timestamp(required=True),
        "data": fields.Nested(data, required=True),
    }
    name = event_type.split(".")[1].title().replace("_", "") + "WebhookSchema"  # review_task.live_failed: LiveFailed
    return type(name, (Schema,), {"__doc__": doc, **body})


# event type -> (data schema, body schema, when it is sent)
WEBHOOKS: dict[str, tuple[type[Schema], type[Schema], str]] = {
    event_type: (data, _webhook(event_type, data, f"The body of the {event_type} webhook."), when)
    for event_type, data, when in (
        ("review_task.rejected", RejectionDataSchema, "a task is rejected for rework"),
        ("review_task.approved", ApprovalDataSchema, "a task is approved (with or without publishing)"),
        ("review_task.published", PublishedDataSchema, "a publish job saved the platform draft"),
        ("review_task.publish_failed", PublishFailedDataSchema, "a publish job failed"),
        ("review_task.live", LiveDataSchema, "the article went live: readers can open articleUrl"),
        ("review_task.live_failed", LiveDataSchema, "going live failed (failReason says why)"),
        ("review_task.stats", StatsDataSchema, "a live article's figures of a day were fetched (once per day)"),
        ("review_task.comments", CommentsDataSchema, "readers' new comments of a live article (each once)"),
    )
}
