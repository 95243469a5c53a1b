"""Reviewer and agent input: selections per content type, overrides, body draft, decision, element PATCH."""

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from rules.limits import (
    APPROVAL_AUTHOR_MAX,
    APPROVAL_SUMMARY_MAX,
    MAX_CONTENT,
    MAX_ID,
    MAX_IMAGES,
    MAX_TEXT,
    PATCH_SUMMARY_MAX,
    TITLE_MAX,
)
from rules.vocabulary import ACTIONS, ALL_ELEMENT_KEYS, REJECTION_REASONS, THEME_NAMES
from schemas.review.refs import AssetIdSchema, AssetRef, CommentSettingsSchema, CoverCropSchema, StrictBoolean


class ArticleSelectionsSchema(Schema):
    """Article selections; bodyImages and coverImage take {"assetId"} or an asset URL."""

    author = fields.String(
        validate=validate.Length(max=TITLE_MAX),
        metadata={"description": f"at most {APPROVAL_AUTHOR_MAX} characters at approval"},
    )
    title = fields.String(validate=validate.Length(max=TITLE_MAX))
    summary = fields.String(
        validate=validate.Length(max=PATCH_SUMMARY_MAX),
        metadata={"description": f"at most {APPROVAL_SUMMARY_MAX} characters at approval"},
    )
    body = fields.String(validate=validate.Length(max=MAX_CONTENT), metadata={"description": "Markdown"})
    bodyImages = fields.List(AssetRef(allow_url=True), validate=validate.Length(max=50))
    coverImage = AssetRef(allow_url=True, metadata={"description": "width/height within the configured ratio"})


class ImagePostSelectionsSchema(Schema):
    """Image-post selections; images are {"assetId"} objects, the first one is the cover."""

    title = fields.String(validate=validate.Length(max=TITLE_MAX))
    description = fields.String(validate=validate.Length(max=MAX_TEXT))
    images = fields.List(fields.Nested(AssetIdSchema), validate=validate.Length(min=1, max=MAX_IMAGES))
    coverCrop = fields.Nested(CoverCropSchema)
    commentSettings = fields.Nested(CommentSettingsSchema)


class SelectionsSchema(ArticleSelectionsSchema, ImagePostSelectionsSchema):
    """Selections of either content type; fields of the other type are refused for a given task."""


class TextOverrideSchema(Schema):
    basedOn = fields.String(
        required=True,
        validate=validate.Length(max=MAX_CONTENT),
        metadata={"description": "the candidate value the edit started from"},
    )
    value = fields.String(
        required=True,
        validate=validate.Length(max=MAX_CONTENT),
        metadata={"description": "must equal the final selection"},
    )


class BodyOverrideSchema(Schema):
    basedOnCandidateId = fields.String(required=True, validate=validate.Length(min=1, max=MAX_ID))
    value = fields.String(
        required=True,
        validate=validate.Length(max=MAX_CONTENT),
        metadata={"description": "must equal bodyDraft.markdown"},
    )


class CoverImageOverrideSchema(Schema):
    basedOn = AssetRef(allow_url=True, allow_none=True, load_default=None)
    value = AssetRef(allow_url=True, required=True)


class BodyImagesOverrideSchema(Schema):
    basedOn = fields.List(AssetRef(allow_url=True), allow_none=True, load_default=None)
    value = fields.List(AssetRef(allow_url=True), required=True)


class ImagesOverrideSchema(Schema):
    basedOn = fields.List(AssetRef(), allow_none=True, load_default=None)
    value = fields.List(AssetRef(), required=True)


class ManualOverridesSchema(Schema):
    """Reviewer-authored changes: where each started and its final value."""

    title = fields.Nested(TextOverrideSchema)
    summary = fields.Nested(TextOverrideSchema)
    description = fields.Nested(TextOverrideSchema)
    body = fields.Nested(BodyOverrideSchema)
    coverImage = fields.Nested(CoverImageOverrideSchema)
    bodyImages = fields.Nested(BodyImagesOverrideSchema)
    images = fields.Nested(ImagesOverrideSchema)


class ThemeConfigSchema(Schema):
    cssVariables = fields.Dict(keys=fields.String(), values=fields.String(), required=True)


class BodyDraftSchema(Schema):
    """The article body used for publishing; the server checks it against its source candidate."""

    markdown = fields.String(required=True, validate=validate.Length(max=MAX_CONTENT))
    sourceBodyCandidateId = fields.String(
        required=True,
        allow_none=True,
        validate=validate.Length(min=1, max=MAX_ID),
        error_messages={"required": "a submitted bodyDraft must include sourceBodyCandidateId"},
        metadata={
            "description": "null only on a task created without body options: the body was written "
            "by the reviewer or the agent, not taken from a candidate"
        },
    )
    sourceBodyCandidate = fields.String(
        validate=validate.Length(max=MAX_CONTENT),
        allow_none=True,
        metadata={"description": "filled in by the server when absent; null when the draft has no source option"},
    )
    bodyEditedFromCandidate = StrictBoolean(metadata={"description": "computed by the server when absent"})
    themeTemplate = fields.String(
        allow_none=True,
        validate=validate.Length(max=64),
        metadata={"description": "one of " + ", ".join(THEME_NAMES) + "; null: default"},
    )
    themeConfig = fields.Nested(ThemeConfigSchema, allow_none=True)


class DecisionSchema(Schema):
    """POST /api/review/tasks/{taskId}/decision."""

    action = fields.String(required=True, validate=validate.OneOf(ACTIONS))
    selections = fields.Nested(
        SelectionsSchema, allow_none=True, metadata={"description": "complete for approval and field-level rejection"}
    )
    manualOverrides = fields.Nested(ManualOverridesSchema, allow_none=True)
    bodyDraft = fields.Nested(BodyDraftSchema, allow_none=True)
    rejectedElements = fields.List(
        fields.String(validate=validate.OneOf(ALL_ELEMENT_KEYS)),
        allow_none=True,
        metadata={"description": "reject_rework; empty or absent rejects the whole task"},
    )
    lockedSelections = fields.Nested(SelectionsSchema, allow_none=True)
    rejectionReason = fields.String(allow_none=True, validate=validate.OneOf(REJECTION_REASONS))
    rejectionNote = fields.String(allow_none=True, validate=validate.Length(max=MAX_TEXT))


class PatchElementsSchema(ArticleSelectionsSchema, ImagePostSelectionsSchema):
    """PATCH /api/review/agent/tasks/{taskId}/elements: a partial selections object (the route says which images)."""

    sourceBodyCandidateId = fields.String(
        validate=validate.Length(min=1, max=MAX_ID),
        metadata={"description": "travels with body; needed when several body options exist and no draft yet"},
    )

    @validates_schema
    def not_empty(self, data, **kwargs):
        if "sourceBodyCandidateId" in data and "body" not in data:
            raise ValidationError({"sourceBodyCandidateId": ["only allowed together with body"]})
        if not data:
            raise ValidationError("send at least one field to change")
