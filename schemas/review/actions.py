"""Shapes of the admin's side routes: the body preview, the phone preview, publish progress and the
task deletion answer."""

import re

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from rules.limits import MAX_CONTENT, WECHAT_ID_PATTERN
from schemas.common import account, timestamp


class PreviewSchema(Schema):
    """POST /api/review/preview."""

    markdown = fields.String(required=True, validate=validate.Length(max=MAX_CONTENT))
    themeTemplate = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    publicAccount = account(load_default=None, allow_none=True)


class PreviewResultSchema(Schema):
    html = fields.String(required=True, metadata={"description": "the themed article body, as published"})


class DeleteResultSchema(Schema):
    """Answer of DELETE /api/review/tasks/{taskId}."""

    deletedTaskId = fields.String(required=True)
    deletedFileCount = fields.Integer(required=True, metadata={"description": "local review files deleted"})
    skippedAssetCount = fields.Integer(
        required=True,
        metadata={
            "description": "library, remote and external images, files still used by another task, failed deletions"
        },
    )
    redirectTo = fields.String(required=True, metadata={"description": "always /review"})


class _Whole(validate.Regexp):
    """The pattern matches the whole value: Python's `$` also matches before a final newline."""

    def __init__(self, pattern: str, error: str) -> None:
        super().__init__(pattern, error=error)
        self.whole = re.compile(pattern)

    def __call__(self, value):
        if not isinstance(value, str) or self.whole.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


WECHAT_ID_RULES = [
    validate.Length(min=1, max=64),
    _Whole(WECHAT_ID_PATTERN, error="letters, digits, '_' and '-' only, as WeChat makes them"),
]


class PhonePreviewSchema(Schema):
    """POST /api/review/tasks/{taskId}/preview: one recipient, by WeChat ID or by openid (docs/api.md §12)."""

    JSON_SCHEMA_EXTRA = {"oneOf": [{"required": ["wechatName"]}, {"required": ["openId"]}]}

    wechatName = fields.String(
        validate=WECHAT_ID_RULES, metadata={"description": "the follower's WeChat ID (towxname)"}
    )
    openId = fields.String(
        validate=WECHAT_ID_RULES, metadata={"description": "the follower's openid for this account (touser)"}
    )

    @validates_schema
    def one_recipient(self, data, **kwargs):
        if len(data) != 1:
            raise ValidationError("give exactly one of wechatName and openId", "wechatName")


class PublishProgressSchema(Schema):
    """GET /api/review/tasks/{taskId}/publish-progress: what a running publish is doing."""

    running = fields.Boolean(required=True)
    jobId = fields.String()
    startedAt = timestamp()
    step = fields.String(validate=validate.OneOf(("starting", "uploading_images", "saving_draft")))
    done = fields.Integer(metadata={"description": "images uploaded so far (uploading_images)"})
    total = fields.Integer(metadata={"description": "images this job uploads (uploading_images)"})
