"""Going live (docs/api.md §18): the request, and where a task's article stands."""

from marshmallow import Schema, fields, validate

from rules.vocabulary import LIVE_STATUSES, LIVE_VIA
from schemas.common import timestamp


class GoLiveSchema(Schema):
    """`{}` publishes to readers now; `at` schedules it (ISO 8601 with an offset, at most 30 days ahead)."""

    at = fields.AwareDateTime(
        load_default=None,
        error_messages={
            "invalid": "Not a valid datetime: give ISO 8601 with its offset, e.g. 2026-12-01T08:00:00+08:00.",
            "invalid_awareness": "Needs a timezone offset, e.g. 2026-12-01T08:00:00+08:00.",
        },
        metadata={"description": "when to publish, with its offset (e.g. 2026-12-01T08:00:00+08:00); absent: now"},
    )


class LiveSchema(Schema):
    status = fields.String(required=True, validate=validate.OneOf(LIVE_STATUSES))
    at = timestamp("when it is (or was) submitted to the platform", required=True)
    publishId = fields.String(attribute="publish_id", required=True, allow_none=True)
    articleId = fields.String(attribute="article_id", required=True, allow_none=True)
    articleUrl = fields.String(attribute="article_url", required=True, allow_none=True)
    failReason = fields.String(attribute="fail_reason", required=True, allow_none=True)
    via = fields.String(
        required=True,
        validate=validate.OneOf(LIVE_VIA),
        metadata={"description": "freepublish (go-live) or mass_send (an edition, docs/api.md §21)"},
    )
    editionId = fields.String(attribute="edition_id", required=True, allow_none=True)
    updatedAt = timestamp(attribute="updated_at", required=True)
