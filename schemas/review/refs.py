"""Shared shapes of the review area: strict scalars, asset references, cover crop, comment settings."""

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from rules.limits import MAX_URL

ASSET_ID_OBJECT = {
    "type": "object",
    "required": ["assetId"],
    "additionalProperties": False,
    "properties": {"assetId": {"type": "string", "minLength": 1, "maxLength": 64}},
}
ASSET_URL = {
    "type": "string",
    "minLength": 1,
    "pattern": r"^\s*\S",
    "maxLength": MAX_URL,
    "description": "the url of an existing asset",
}


# A string with at least one non-space character; a Regexp, so the OpenAPI document states it as
# `pattern` (re.match anchors at the start: any spaces, then one that is not).
not_blank = validate.Regexp(r"^\s*\S", error="must not be empty")


class StrictBoolean(fields.Boolean):
    """true or false only (no 1, "yes", "true")."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class StrictFloat(fields.Float):
    """A JSON number only (no numeric strings, no booleans, no NaN)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class AssetIdSchema(Schema):
    """A material asset reference: {"assetId": "..."} (ids come from POST /api/assets/upload)."""

    assetId = fields.String(required=True, validate=validate.Length(min=1, max=64))


class AssetRef(fields.Field):
    """{"assetId": "..."}; with allow_url (article selections) also the URL string of an asset."""

    def __init__(self, *, allow_url=False, **kwargs):
        self.allow_url = allow_url
        schema = {"oneOf": [ASSET_ID_OBJECT, ASSET_URL]} if allow_url else ASSET_ID_OBJECT
        kwargs["metadata"] = {**schema, **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, dict):
            return AssetIdSchema().load(value)
        if self.allow_url and isinstance(value, str):
            if not value.strip() or len(value) > MAX_URL:
                raise ValidationError(f"an asset URL must be a non-empty string of at most {MAX_URL} characters")
            return value
        if self.allow_url:
            raise ValidationError('an asset reference is {"assetId": "..."} or the url of an asset')
        raise ValidationError('an asset reference is {"assetId": "..."}')


class CropPercentSchema(Schema):
    """One crop box in fractions of the image (0..1), x2 > x1 and y2 > y1 (`x-greater-than`); the box
    must be 3:4 in the image's pixels."""

    ratio = fields.String(required=True, validate=validate.OneOf(["3_4"], error="must be the literal 3_4"))
    # x2 > x1 itself is beyond OpenAPI; what follows from it per field (x1 < 1, x2 > 0) is stated.
    x1 = StrictFloat(required=True, validate=validate.Range(min=0, max=1, max_inclusive=False))
    y1 = StrictFloat(required=True, validate=validate.Range(min=0, max=1, max_inclusive=False))
    x2 = StrictFloat(
        required=True,
        validate=validate.Range(min=0, max=1, min_inclusive=False),
        metadata={"description": "greater than x1", "x-greater-than": "x1"},
    )
    y2 = StrictFloat(
        required=True,
        validate=validate.Range(min=0, max=1, min_inclusive=False),
        metadata={"description": "greater than y1", "x-greater-than": "y1"},
    )

    @validates_schema
    def ordered(self, data, **kwargs):
        errors = {
            high: [f"must be greater than {low}"]
            for low, high in (("x1", "x2"), ("y1", "y2"))
            if data[low] >= data[high]
        }
        if errors:
            raise ValidationError(errors)


class CoverCropSchema(Schema):
    """Cover crop of an image post; assetId is the first selected image."""

    assetId = fields.String(required=True, validate=validate.Length(min=1, max=64))
    cropPercentList = fields.List(
        fields.Nested(CropPercentSchema), required=True, validate=validate.Length(min=1, max=10)
    )


class CommentSettingsSchema(Schema):
    needOpenComment = StrictBoolean(required=True)
    onlyFansCanComment = StrictBoolean(required=True)
