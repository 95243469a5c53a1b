"""Shapes of feedback records, the client's creation payload, the status change and the list query
(docs/api.md §9). Types and limits only; the anonymous-channel rule and the
duplicate check live in services.feedback.intake."""

import json

from marshmallow import Schema, ValidationError, fields, validate, validates, validates_schema

from rules.client_input import bound, moment
from rules.ids import iso
from rules.limits import MAX_EXTRA_BYTES
from rules.vocabulary import ATTACHMENT_KINDS, FEEDBACK_STATUSES
from schemas.common import PageQuerySchema, PaginationSchema, QuerySchema, timestamp

LIST_STATUSES = ("all", *FEEDBACK_STATUSES)


def _text(max_length, required=False, **kwargs):
    """A string of 1..max_length characters that is not only white space."""
    checks = [validate.Length(min=1, max=max_length), validate.Regexp(r"[\s\S]*\S", error="must not be blank")]
    if required:
        return fields.String(required=True, validate=checks, **kwargs)
    return fields.String(load_default=None, allow_none=True, validate=checks, **kwargs)


class IsoMoment(fields.Field):
    """ISO 8601 date-time (a missing offset means UTC) -> normalized '...T..:..:..mmmZ' string."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or len(value) > 40:
            raise ValidationError("must be an ISO 8601 date-time string")
        try:
            return iso(moment(value))
        except ValueError as exc:
            raise ValidationError(str(exc)) from None


class FeedbackCreateSchema(Schema):
    """POST /api/feedbacks. `types` is the configured FEEDBACK_TYPES (None: any, for the docs)."""

    type = fields.String(
        required=True,
        validate=validate.Length(min=1, max=32),
        metadata={"description": "one of FEEDBACK_TYPES (default bug, suggestion, content, account, other)"},
    )
    title = _text(200, required=True)
    content = _text(10_000, required=True)
    appName = _text(100, required=True)
    appVersion = _text(64, required=True)
    platform = _text(64, required=True)
    userId = _text(128)
    contactEmail = fields.Email(load_default=None, allow_none=True, validate=validate.Length(max=254))
    contactWechat = _text(64)
    buildNumber = _text(64)
    deviceModel = _text(128)
    osVersion = _text(64)
    deviceId = _text(128)
    pagePath = _text(1024)
    occurredAt = IsoMoment(
        load_default=None,
        allow_none=True,
        metadata={
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601; no offset means UTC, a date alone its midnight UTC; stored as ...T..:..:..mmmZ",
        },
    )
    logText = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=65_536))
    extra = fields.Dict(
        keys=fields.String(),
        load_default=None,
        allow_none=True,
        metadata={"description": "JSON object of at most 4 KiB; envVersion and locale are named"},
    )

    def __init__(self, *args, types=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.types = tuple(types) if types is not None else None

    @validates("type")
    def _known_type(self, value, **_kwargs):
        if self.types is not None and value not in self.types:
            raise ValidationError(f"must be one of: {', '.join(self.types)}")

    @validates("extra")
    def _small_extra(self, value, **_kwargs):
        if value is None:
            return
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
        if size > MAX_EXTRA_BYTES:
            raise ValidationError(f"must be at most {MAX_EXTRA_BYTES} bytes of JSON, got {size}")


class FeedbackStatusSchema(Schema):
    """PATCH /api/feedbacks/:id/status."""

    status = fields.String(required=True, validate=validate.OneOf(FEEDBACK_STATUSES))
    adminNote = fields.String(
        allow_none=True,
        validate=validate.Length(max=10_000),
        metadata={"description": "stored whenever given; null clears it"},
    )


class _Bound(fields.Field):
    """ISO date or date-time -> UTC datetime; `end=True`: the exclusive end (rules.client_input.bound)."""

    def __init__(self, *, end=False, **kwargs):
        super().__init__(load_default=None, metadata={"type": "string", "format": "date or date-time"}, **kwargs)
        self.end = end

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return bound(str(value), end=self.end)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None


class FeedbackFilterSchema(QuerySchema):
    """Filters shared by the list and the CSV export."""

    status = fields.String(load_default="all", validate=validate.OneOf(LIST_STATUSES))
    type = fields.String(load_default=None, validate=validate.Length(min=1, max=32))
    appName = fields.String(load_default=None, validate=validate.Length(min=1, max=100))
    platform = fields.String(load_default=None, validate=validate.Length(min=1, max=64))
    appVersion = fields.String(load_default=None, validate=validate.Length(min=1, max=64))
    # A NUL ends an FTS5 MATCH phrase early (a storage error); no control character belongs in a search.
    # The pattern reads the same in Python and in the OpenAPI document (ECMA).
    keyword = fields.String(
        load_default=None,
        validate=[
            validate.Length(max=200),
            validate.Regexp(r"^(?![\s\S]*[\x00-\x1f\x7f])", error="must not contain control characters"),
        ],
        metadata={
            "description": "part of title, content, feedbackNo, userId, contactEmail or contactWechat "
            "(case-insensitive)"
        },
    )
    created_from = _Bound(data_key="from")
    created_before = _Bound(data_key="to", end=True)

    @validates_schema
    def _ordered(self, data, **_kwargs):
        start, end = data.get("created_from"), data.get("created_before")
        if start is not None and end is not None and start >= end:
            raise ValidationError("must not be earlier than from", "to")


class FeedbackListQuerySchema(FeedbackFilterSchema, PageQuerySchema):
    pass


class FeedbackAttachmentSchema(Schema):
    id = fields.String(attribute="attachment_id", required=True)
    kind = fields.String(required=True, validate=validate.OneOf(ATTACHMENT_KINDS))
    fileName = fields.String(
        attribute="file_name", required=True, metadata={"description": "the client's file name, for display"}
    )
    contentType = fields.String(attribute="content_type", required=True)
    size = fields.Integer(required=True, metadata={"description": "bytes of the stored file"})
    sha256 = fields.String(required=True)
    createdAt = timestamp(attribute="created_at", required=True)


class _FeedbackFields(Schema):
    id = fields.String(attribute="feedback_id", required=True)
    feedbackNo = fields.String(
        attribute="feedback_no", required=True, metadata={"description": "FB-YYYYMMDD-NNNN (UTC day)"}
    )
    type = fields.String(required=True)
    title = fields.String(required=True)
    content = fields.String(required=True)
    appName = fields.String(attribute="app_name", required=True)
    appVersion = fields.String(attribute="app_version", required=True)
    platform = fields.String(required=True)
    userId = fields.String(attribute="user_id", allow_none=True)
    contactEmail = fields.String(attribute="contact_email", allow_none=True)
    contactWechat = fields.String(attribute="contact_wechat", allow_none=True)
    buildNumber = fields.String(attribute="build_number", allow_none=True)
    deviceModel = fields.String(attribute="device_model", allow_none=True)
    osVersion = fields.String(attribute="os_version", allow_none=True)
    deviceId = fields.String(attribute="device_id", allow_none=True)
    pagePath = fields.String(attribute="page_path", allow_none=True)
    occurredAt = timestamp(attribute="occurred_at", allow_none=True)
    logText = fields.String(attribute="log_text", allow_none=True)
    extra = fields.Dict(allow_none=True)
    status = fields.String(required=True, validate=validate.OneOf(FEEDBACK_STATUSES))
    adminNote = fields.String(attribute="admin_note", allow_none=True)
    processedAt = timestamp("set only while status is processed", attribute="processed_at", allow_none=True)
    processedBy = fields.String(attribute="processed_by", allow_none=True, metadata={"description": "admin user name"})
    channel = fields.String(required=True, metadata={"description": "client channel that submitted it"})
    createdAt = timestamp(attribute="created_at", required=True)
    updatedAt = timestamp(attribute="updated_at", required=True)


class FeedbackDetailSchema(_FeedbackFields):
    attachments = fields.List(
        fields.Nested(FeedbackAttachmentSchema), required=True, metadata={"description": "ordered by creation time"}
    )


class FeedbackListItemSchema(_FeedbackFields):
    attachmentCount = fields.Integer(attribute="attachment_count", required=True)


class FeedbackCountsSchema(Schema):
    all = fields.Integer(required=True)
    unprocessed = fields.Integer(required=True)
    processing = fields.Integer(required=True)
    processed = fields.Integer(required=True)


class FeedbackPageSchema(Schema):
    items = fields.List(fields.Nested(FeedbackListItemSchema), required=True)
    pagination = fields.Nested(PaginationSchema, required=True)
    counts = fields.Nested(
        FeedbackCountsSchema, required=True, metadata={"description": "over the whole table, not the filtered set"}
    )


class FeedbackAttachmentFormSchema(Schema):
    """Non-file fields of the multipart upload; the file travels as the part `file`."""

    kind = fields.String(required=True, validate=validate.OneOf(ATTACHMENT_KINDS))
