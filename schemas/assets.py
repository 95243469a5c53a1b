"""Shapes of asset records, the upload form and the library listing (CONTRACT §6)."""
from marshmallow import Schema, fields, validate

UPLOAD_SCOPES = ("review", "library")
LIST_SCOPES = ("library", "review", "all")
MAX_PAGE_SIZE = 100


class AssetSchema(Schema):
    """One image: a local file under /uploads/<scope>/ or a remote platform material."""

    assetId = fields.String(required=True)
    scope = fields.String(required=True, validate=validate.OneOf(UPLOAD_SCOPES))
    url = fields.String(required=True)
    fileName = fields.String(required=True)
    contentType = fields.String(required=True)
    width = fields.Integer(allow_none=True)
    height = fields.Integer(allow_none=True)
    size = fields.Integer(allow_none=True, metadata={"description": "bytes of the stored file"})
    sha256 = fields.String(allow_none=True, metadata={"description": "hex digest of the stored file"})
    createdAt = fields.String(required=True)
    platformMediaId = fields.String(metadata={"description": "media_id of a synced platform material"})


class AssetUploadFormSchema(Schema):
    """Non-file fields of the multipart upload; `file` travels in request.files."""

    scope = fields.String(load_default="review", validate=validate.OneOf(UPLOAD_SCOPES))


class AssetListQuerySchema(Schema):
    scope = fields.String(load_default="library", validate=validate.OneOf(LIST_SCOPES))
    q = fields.String(load_default=None, validate=validate.Length(max=255),
                      metadata={"description": "part of the file name, case-insensitive"})
    page = fields.Integer(load_default=1, strict=False, validate=validate.Range(min=1))
    pageSize = fields.Integer(load_default=20, strict=False, validate=validate.Range(min=1, max=MAX_PAGE_SIZE))


class PaginationSchema(Schema):
    page = fields.Integer(required=True)
    pageSize = fields.Integer(required=True)
    total = fields.Integer(required=True)
    totalPages = fields.Integer(required=True)


class AssetPageSchema(Schema):
    items = fields.List(fields.Nested(AssetSchema), required=True)
    pagination = fields.Nested(PaginationSchema, required=True)
