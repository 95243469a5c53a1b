"""Feedback routes (/api/feedbacks; docs/api.md §9): client intake and attachments with the
client token, listing, detail, status, attachment download and CSV export for admins."""

from datetime import UTC, datetime
from functools import lru_cache

from flask import Response, current_app, g, request, send_file, stream_with_context

from blueprints.bodies import limited_body, load, single_file
from blueprints.common import settings
from blueprints.guards import admin_required, client_required
from blueprints.openapi import Blueprint, request_body
from rules.limits import LOG_MAX_BYTES, MULTIPART_OVERHEAD, SCREENSHOT_MAX_BYTES
from schemas.feedback import (
    FeedbackAttachmentFormSchema,
    FeedbackAttachmentSchema,
    FeedbackCreateSchema,
    FeedbackDetailSchema,
    FeedbackFilterSchema,
    FeedbackListQuerySchema,
    FeedbackPageSchema,
    FeedbackStatusSchema,
)
from services.errors import PayloadTooLarge
from services.feedback import attachments, csvexport, intake, queries, triage
from services.feedback.checks import ATTACHMENT_MEDIA_TYPES
from services.feedback.ratelimit import limiter_from_settings

bp = Blueprint("feedback", __name__)
LIMITER = "feedback_limiter"


def init_app(app):
    """One rate limiter per app instance (tests build many apps; each starts with clean counters)."""
    app.extensions[LIMITER] = limiter_from_settings(app.extensions["settings"])


@lru_cache(maxsize=8)
def _create_schema(types):
    """Built once per set of accepted types: constructing a schema costs more than loading with it."""
    return FeedbackCreateSchema(types=types)


def _anonymous(channel):
    return channel in settings().feedback_anonymous_channels


@bp.post("/api/feedbacks")
@client_required
@bp.doc(requestBody=request_body(FeedbackCreateSchema, "application/json"))  # size and rate limits come first
@bp.answers(201, FeedbackDetailSchema)
def create_feedback():
    """Submit feedback (client token). Checks: 401, 413, 429, 400, 409, then 500 storage_unavailable."""
    channel, client_ip = g.feedback_channel, request.remote_addr
    limiter = current_app.extensions[LIMITER]
    try:
        raw = limited_body(settings().feedback_max_body_bytes, "; send long logs as an attachment")
    except PayloadTooLarge:
        limiter.hit(intake.limit_keys(channel, client_ip))  # counts too, but the answer stays 413
        raise
    payload = intake.parse_json(raw)
    intake.admit(limiter, channel, client_ip, payload)
    payload = intake.require_object(payload)
    if _anonymous(channel):
        intake.check_anonymous_fields(payload, channel)
    data = load(_create_schema(settings().feedback_types), payload)
    return intake.create_feedback(data, channel, client_ip, settings()), 201


@bp.post("/api/feedbacks/<feedback_id>/attachments")
@client_required
@bp.doc(requestBody=request_body(FeedbackAttachmentFormSchema, files=("file",)))  # rate limit and checks come first
@bp.answers(201, FeedbackAttachmentSchema)
def upload_attachment(feedback_id):
    """Attach a screenshot or log file (client token of the channel that created the feedback).

    screenshot: PNG/JPEG/WebP <= 10 MiB, stored re-encoded without metadata; log_file: .log/.txt (UTF-8
    text), .zip, .gz <= 20 MiB. At most 10 per feedback (then 409 attachment_limit), within 7 days of
    its creation (then 409 invalid_state); anonymous channels and other channels get 403. Each upload
    counts toward the feedback rate limits of its client IP and channel (429 with Retry-After).
    """
    channel = g.feedback_channel
    # Counted like submissions, by client IP and channel (a feedback's 10 attachments stay within a
    # device's limit); before the body is read: uploads are the costly requests.
    intake.admit(current_app.extensions[LIMITER], channel, request.remote_addr)
    record = attachments.check_upload_allowed(feedback_id, channel, _anonymous(channel))
    # Set before the multipart body is parsed: a larger request is refused (413) without being read.
    request.max_content_length = LOG_MAX_BYTES + MULTIPART_OVERHEAD
    form = load(FeedbackAttachmentFormSchema, request.form.to_dict(), where="form")
    storage = single_file()
    limit = SCREENSHOT_MAX_BYTES if form["kind"] == "screenshot" else LOG_MAX_BYTES
    data = storage.stream.read(limit + 1)
    created = attachments.add_attachment(record, channel, form["kind"], storage.filename, data, settings().uploads_path)
    return created, 201


@bp.get("/api/feedbacks")
@admin_required("feedback")
@bp.arguments(FeedbackListQuerySchema, location="query")
@bp.answers(200, FeedbackPageSchema)
def list_feedbacks(query):
    """Filtered page of feedback (newest first) with attachmentCount, pagination and whole-table counts."""
    return queries.list_feedbacks(query)


@bp.get("/api/feedbacks/export.csv")
@admin_required("feedback")
@bp.arguments(FeedbackFilterSchema, location="query")
@bp.answers(200, media="text/csv")
def export_csv(query):
    """Every feedback matching the list filters as CSV (UTF-8 with BOM), streamed."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    chunks = csvexport.csv_chunks(queries.iter_feedbacks(query))
    return Response(
        stream_with_context(chunks),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="feedback-{stamp}.csv"', "Cache-Control": "no-store"},
    )


@bp.get("/api/feedbacks/<feedback_id>")
@admin_required("feedback")
@bp.answers(200, FeedbackDetailSchema)
def get_feedback(feedback_id):
    """One feedback with its attachments in creation order."""
    return queries.get_feedback(feedback_id)


@bp.patch("/api/feedbacks/<feedback_id>/status")
@admin_required("feedback")
@bp.arguments(FeedbackStatusSchema)
@bp.answers(200, FeedbackDetailSchema)
def update_status(body, feedback_id):
    """Set the status (processed records processedAt and processedBy); a given adminNote is stored."""
    note = body["adminNote"] if "adminNote" in body else triage.UNSET
    return triage.set_status(feedback_id, body["status"], g.actor[1], note)


@bp.get("/api/feedbacks/<feedback_id>/attachments/<attachment_id>")
@admin_required("feedback")
@bp.answers(200, media=ATTACHMENT_MEDIA_TYPES)
def download_attachment(feedback_id, attachment_id):
    """Download one attachment file under the client's file name."""
    attachment, path = attachments.attachment_file(feedback_id, attachment_id, settings().uploads_path)
    # The media type alone: for text/* send_file adds the charset itself (else it would appear twice).
    response = send_file(
        path,
        mimetype=attachment.content_type.split(";")[0],
        as_attachment=True,
        download_name=attachment.file_name,
        max_age=0,
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.private = True
    return response
