"""Shapes of the admin's side routes: the body preview and the task deletion answer."""
from marshmallow import Schema, fields, validate

from rules.limits import MAX_CONTENT
from rules.vocabulary import ACCOUNTS


class PreviewSchema(Schema):
    """POST /api/review/preview."""

    markdown = fields.String(required=True, validate=validate.Length(max=MAX_CONTENT))
    themeTemplate = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    publicAccount = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(ACCOUNTS))


class PreviewResultSchema(Schema):
    html = fields.String(required=True, metadata={"description": "the themed article body, as published"})


class DeleteResultSchema(Schema):
    """Answer of DELETE /api/review/tasks/{taskId}."""

    deletedTaskId = fields.String(required=True)
    deletedFileCount = fields.Integer(required=True, metadata={"description": "local review files deleted"})
    skippedAssetCount = fields.Integer(required=True, metadata={
        "description": "library, remote and external images, files still used by another task, failed deletions"})
    redirectTo = fields.String(required=True, metadata={"description": "always /review"})
