"""Asset routes (docs/api.md §6): upload, library listing, one asset, and serving the local files."""

from flask import g, request, send_from_directory
from werkzeug.routing import BaseConverter

from blueprints.bodies import load, single_file
from blueprints.common import settings
from blueprints.guards import agent_or_admin
from blueprints.openapi import Blueprint, request_body
from rules.limits import MAX_UPLOAD_BYTES, MULTIPART_OVERHEAD
from schemas.assets import AssetListQuerySchema, AssetPageSchema, AssetSchema, AssetUploadFormSchema
from services import assets as asset_service
from services.errors import Forbidden, NotFound, ValidationFailed
from services.files import real_file_inside
from services.paging import pagination

bp = Blueprint("assets", __name__)


class AssetIdConverter(BaseConverter):
    """Any path segment but `upload`: /api/assets/upload is the upload route only (a GET there is 405, Allow: POST)."""

    regex = r"(?!upload$)[^/]+"


# Before the routes below are added: their rules are compiled with it.
@bp.record_once
def _asset_id_converter(state):
    state.app.url_map.converters.setdefault("asset_id", AssetIdConverter)


SERVED_SCOPES = ("review", "library")  # feedback attachments have their own guarded route
# Stored files never change (a new upload gets a new name), so clients may keep them; `private`
# because they are only served with credentials.
FILE_CACHE_SECONDS = 365 * 24 * 3600
CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif"}


@bp.post("/api/assets/upload")
@agent_or_admin("review")
@bp.doc(requestBody=request_body(AssetUploadFormSchema, files=("file",)))  # read after its size limit is set
@bp.answers(201, AssetSchema)
@bp.answers(200, AssetSchema)
def upload():
    """Upload a PNG, JPEG, GIF or WebP image (scope review, or library for admins); same bytes again: 200."""
    # Set before the body is parsed: a larger request is refused as 413 without being read.
    request.max_content_length = MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD
    if "scope" in request.args:  # was ignored: an image meant for the library landed in review
        raise ValidationFailed(
            "scope is a form field of the upload, not a query parameter",
            {"scope": ["send it as a form field next to file"]},
        )
    fields = request.form.to_dict()
    fields.pop("file", None)  # sent as text rather than as a file part: reported as missing below
    form = load(AssetUploadFormSchema, fields, where="form")
    if form["scope"] == "library" and g.actor[0] != "admin":
        raise Forbidden("only an administrator may add images to the shared library (scope=library)")
    storage = single_file()
    data = storage.stream.read(MAX_UPLOAD_BYTES + 1)
    asset, created = asset_service.save_upload(
        data, scope=form["scope"], file_name=storage.filename, uploads_root=settings().uploads_path
    )
    return asset_service.asset_view(asset), 201 if created else 200


@bp.get("/api/assets")
@agent_or_admin("review")
@bp.arguments(AssetListQuerySchema, location="query")
@bp.answers(200, AssetPageSchema)
def list_assets(query):
    """Browse the shared material library (scope library by default, review, or all), newest first."""
    items, total = asset_service.list_assets(query["scope"], query["q"], query["page"], query["pageSize"])
    return {
        "items": [asset_service.asset_view(a) for a in items],
        "pagination": pagination(query["page"], query["pageSize"], total),
    }


@bp.get("/api/assets/<asset_id:asset_id>")
@agent_or_admin("review")
@bp.answers(200, AssetSchema)
def get_asset(asset_id):
    """One asset record."""
    return asset_service.asset_view(asset_service.get_asset(asset_id))


@bp.get("/uploads/<scope>/<path:name>")
@agent_or_admin("review")
@bp.doc(errors=(400, 401, 403, 404, 500))
@bp.answers(200, media=tuple(CONTENT_TYPES.values()))
@bp.answers(304, media=None, description="The client's copy is current (If-None-Match or If-Modified-Since)")
def serve_file(scope, name):
    """A stored review or library image (scope review or library; else 404), to an admin session or the agent token."""
    if scope not in SERVED_SCOPES or not asset_service.STORED_NAME.match(name):
        raise NotFound("no such file")
    path = real_file_inside(f"{settings().uploads_path}/{scope}", name)
    if path is None:  # missing, or a link out of the folder
        raise NotFound("no such file")
    mimetype = CONTENT_TYPES[name.rsplit(".", 1)[1]]
    response = send_from_directory(path.parent, path.name, mimetype=mimetype, max_age=FILE_CACHE_SECONDS)
    response.cache_control.private = True
    response.cache_control.public = False
    response.cache_control.immutable = True
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
