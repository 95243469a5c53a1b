"""What readers did (docs/api.md §19): a live article's figures per day and in total."""

from marshmallow import Schema, fields


class StatsFiguresSchema(Schema):
    """Figures the platform reported; a figure it did not give is null, never 0."""

    readUser = fields.Integer(required=True, allow_none=True)
    shareUser = fields.Integer(required=True, allow_none=True)
    likeUser = fields.Integer(required=True, allow_none=True)
    zaikanUser = fields.Integer(required=True, allow_none=True)
    collectionUser = fields.Integer(required=True, allow_none=True)
    commentCount = fields.Integer(required=True, allow_none=True)


class StatsDaySchema(StatsFiguresSchema):
    date = fields.String(required=True, metadata={"format": "date"})


class TaskStatsSchema(Schema):
    articleUrl = fields.String(required=True, allow_none=True, metadata={"description": "null until the task is live"})
    days = fields.List(fields.Nested(StatsDaySchema), required=True, metadata={"description": "ascending"})
    totals = fields.Nested(StatsFiguresSchema, required=True)
    lastError = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "the account's last failed fetch (day: meaning), if any"},
    )
