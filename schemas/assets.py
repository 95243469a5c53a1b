"""Shapes of asset records, the upload form and the library listing (docs/api.md §6)."""

from marshmallow import Schema, fields, validate

from schemas.common import PageQuerySchema, PaginationSchema, timestamp

UPLOAD_SCOPES = ("review", "library")
LIST_SCOPES = ("library", "review", "all")


class AssetSchema(Schema):
    """One image: a local file under /uploads/<scope>/ or a remote platform material."""

    assetId = fields.String(attribute="asset_id", required=True)
    scope = fields.String(required=True, validate=validate.OneOf(UPLOAD_SCOPES))
    url = fields.String(required=True)
    fileName = fields.String(attribute="file_name", required=True)
    contentType = fields.String(attribute="content_type", required=True)
    width = fields.Integer(allow_none=True)
    height = fields.Integer(allow_none=True)
    size = fields.Integer(allow_none=True, metadata={"description": "bytes of the stored file"})
    sha256 = fields.String(allow_none=True, metadata={"description": "hex digest of the stored file"})
    createdAt = timestamp(attribute="created_at", required=True)
    platformMediaId = fields.String(
        attribute="platform_media_id", metadata={"description": "media_id of a synced platform material"}
    )


class AssetUploadFormSchema(Schema):
    """Non-file fields of the multipart upload; `file` travels in request.files."""

    scope = fields.String(load_default="review", validate=validate.OneOf(UPLOAD_SCOPES))


class AssetListQuerySchema(PageQuerySchema):
    scope = fields.String(load_default="library", validate=validate.OneOf(LIST_SCOPES))
    q = fields.String(
        load_default=None,
        validate=validate.Length(max=255),
        metadata={"description": "part of the file name, case-insensitive"},
    )


class AssetPageSchema(Schema):
    items = fields.List(fields.Nested(AssetSchema), required=True)
    pagination = fields.Nested(PaginationSchema, required=True)
