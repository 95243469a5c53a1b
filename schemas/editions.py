"""Editions (docs/api.md §21): requests and the edition's shape."""

from marshmallow import Schema, ValidationError, fields, validate, validates

from rules.vocabulary import EDITION_MAX_ARTICLES, EDITION_STATUSES
from schemas.common import KnownAccount, QuerySchema, timestamp
from schemas.review.actions import WECHAT_ID_RULES
from schemas.review.live import GoLiveSchema
from schemas.review.refs import StrictBoolean


class _TaskIds(Schema):
    taskIds = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        required=True,
        validate=validate.Length(min=1, max=EDITION_MAX_ARTICLES),
        metadata={
            "description": f"1 to {EDITION_MAX_ARTICLES} tasks of the account in order: the first is the headline"
        },
    )

    @validates("taskIds")
    def _distinct(self, value, **_kwargs):
        if len(set(value)) != len(value):
            raise ValidationError("a task appears more than once")


class EditionCreateSchema(_TaskIds):
    account = fields.String(required=True, validate=KnownAccount())


class EditionPatchSchema(_TaskIds):
    pass


class EditionSendSchema(GoLiveSchema):
    """`{}` sends now to every follower; `at` schedules it, `tagId` sends to one follower tag."""

    tagId = fields.Integer(
        strict=True,
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, max=2**31 - 1),
        metadata={"description": "a follower tag (GET /api/editions/tags); absent: everyone"},
    )
    ignoreReprint = StrictBoolean(
        load_default=False,
        metadata={"description": "send even when the platform finds an article is a reprint (send_ignore_reprint)"},
    )


class EditionPreviewSchema(Schema):
    wechatId = fields.String(
        required=True,
        validate=WECHAT_ID_RULES,
        metadata={"description": "the editor's WeChat ID (towxname), a follower"},
    )


class EditionListQuerySchema(QuerySchema):
    account = fields.String(validate=KnownAccount())
    status = fields.String(validate=validate.OneOf(EDITION_STATUSES))


class EditionTagsQuerySchema(QuerySchema):
    account = fields.String(required=True, validate=KnownAccount())


class EditionCountsSchema(Schema):
    """null: the event's count was not a number in range (docs/api.md §21 "The result")."""

    total = fields.Integer(required=True, allow_none=True)
    filter = fields.Integer(required=True, allow_none=True)
    sent = fields.Integer(required=True, allow_none=True)
    error = fields.Integer(required=True, allow_none=True)


class EditionArticleSchema(Schema):
    taskId = fields.String(required=True)
    index = fields.Integer(required=True, metadata={"description": "1-based: 1 is the headline"})
    articleUrl = fields.String(required=True, allow_none=True)


class EditionSchema(Schema):
    id = fields.String(required=True)
    account = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(EDITION_STATUSES))
    taskIds = fields.List(fields.String(), required=True)
    sendAt = timestamp("when it is (or was) sent", required=True, allow_none=True)
    tagId = fields.Integer(required=True, allow_none=True)
    ignoreReprint = fields.Boolean(required=True)
    draftMediaId = fields.String(required=True, allow_none=True)
    msgId = fields.String(required=True, allow_none=True)
    msgDataId = fields.String(required=True, allow_none=True)
    counts = fields.Nested(EditionCountsSchema, required=True, allow_none=True)
    failReason = fields.String(required=True, allow_none=True)
    articles = fields.List(fields.Nested(EditionArticleSchema), required=True)
    createdBy = fields.String(required=True, allow_none=True, metadata={"description": "null: the agent"})
    createdAt = timestamp(required=True)
    updatedAt = timestamp(required=True)
    version = fields.Integer(required=True)


class FollowerTagSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    count = fields.Integer(required=True)


class FollowerTagsSchema(Schema):
    tags = fields.List(fields.Nested(FollowerTagSchema), required=True)
