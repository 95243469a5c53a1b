"""Task responses and list queries; services write the responses with these schemas (schemas.dump)."""

from marshmallow import Schema, fields, validate

from rules.vocabulary import (
    ACTORS,
    ALL_ELEMENT_KEYS,
    CONTENT_TYPES,
    EVENT_TYPES,
    LIVE_STATUSES,
    REJECTION_REASONS,
    STATUSES,
    TRIGGER_MODES,
)
from schemas.common import QuerySchema, account, day_or_moment, timestamp
from schemas.review.candidates import CandidatesSchema, TaskContextSchema
from schemas.review.live import LiveSchema
from schemas.review.selections import BodyDraftSchema, ManualOverridesSchema, SelectionsSchema


class TimelineEventSchema(Schema):
    id = fields.String(attribute="event_id", required=True)
    type = fields.String(required=True, validate=validate.OneOf(EVENT_TYPES))
    at = timestamp(required=True)
    actor = fields.String(required=True, validate=validate.OneOf(ACTORS))
    actorName = fields.String(attribute="actor_name", allow_none=True, required=True)
    data = fields.Dict(required=True)


class PublishJobSchema(Schema):
    id = fields.String(attribute="job_id", required=True)
    taskId = fields.String(attribute="task.task_id", required=True)
    status = fields.String(required=True, validate=validate.OneOf(["succeeded", "failed"]))
    triggerMode = fields.String(attribute="trigger_mode", required=True, validate=validate.OneOf(TRIGGER_MODES))
    attemptCount = fields.Integer(attribute="attempt_count", required=True)
    draftMediaId = fields.String(attribute="draft_media_id")
    queuedAt = timestamp(attribute="queued_at", required=True)
    startedAt = timestamp(attribute="started_at")
    finishedAt = timestamp(attribute="finished_at")
    lastError = fields.String(attribute="last_error")
    snapshot = fields.Dict()
    retryOf = fields.String(attribute="retry_of")


class TaskSchema(Schema):
    """A review task as stored; optional parts are absent until they exist."""

    id = fields.String(attribute="task_id", required=True)
    publicAccount = account(attribute="public_account", required=True)
    topic = fields.String(required=True)
    contentType = fields.String(attribute="content_type", required=True, validate=validate.OneOf(CONTENT_TYPES))
    externalContentId = fields.String(attribute="external_content_id")
    context = fields.Nested(
        TaskContextSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "{prompt, model} as the agent sent them at creation (each null when not sent); null: none"
        },
    )
    candidates = fields.Nested(CandidatesSchema, required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    selections = fields.Nested(SelectionsSchema)
    manualOverrides = fields.Nested(ManualOverridesSchema, attribute="manual_overrides")
    bodyDraft = fields.Nested(BodyDraftSchema, attribute="body_draft")
    rejectedElements = fields.List(
        fields.String(validate=validate.OneOf(ALL_ELEMENT_KEYS)), attribute="rejected_elements"
    )
    lockedSelections = fields.Nested(SelectionsSchema, attribute="locked_selections")
    rejectionReason = fields.String(attribute="rejection_reason", validate=validate.OneOf(REJECTION_REASONS))
    rejectionNote = fields.String(attribute="rejection_note")
    publishJobs = fields.List(fields.Nested(PublishJobSchema), required=True)
    timeline = fields.List(fields.Nested(TimelineEventSchema), required=True)
    live = fields.Nested(
        LiveSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the article's way to readers (docs: going live); null until asked for"},
    )
    version = fields.Integer(required=True, metadata={"description": "also sent as the ETag"})
    createdAt = timestamp(attribute="created_at", required=True)
    updatedAt = timestamp(attribute="updated_at", required=True)


class TaskListQuerySchema(QuerySchema):
    """Filters of GET /api/review/tasks; the response pages with `Link: rel="next"`."""

    status = fields.String(
        load_default=None,
        validate=validate.OneOf(("all", *STATUSES)),
        metadata={"description": "default pending_review; all when only live is given"},
    )
    publicAccount = account(load_default=None)
    live = fields.String(
        load_default=None,
        validate=validate.OneOf(LIVE_STATUSES),
        metadata={"description": "only tasks whose article stands so on its way to readers"},
    )
    from_ = day_or_moment("ISO date or datetime; createdAt lower bound, inclusive", data_key="from")
    to = day_or_moment("inclusive; a date-only value covers the day")
    limit = fields.Integer(load_default=200, validate=validate.Range(min=1, max=1000))
    cursor = fields.String(
        load_default=None,
        validate=validate.Length(max=512),
        metadata={"description": "from the previous page's Link header"},
    )


class AgentTaskListQuerySchema(TaskListQuerySchema):
    externalContentId = fields.String(load_default=None, validate=validate.Length(min=1, max=128))
    updatedSince = day_or_moment(
        "ISO date or datetime; only tasks whose updatedAt is at or after it (what changed since the agent last looked)",
        validate=validate.Length(min=1, max=64),
    )
