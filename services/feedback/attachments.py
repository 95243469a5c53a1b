"""Feedback attachments (docs/api.md §9), stored as `<uploads>/feedback/<feedbackId>/<attachmentId>.<ext>`.
Checked in this order: anonymous channel 403; unknown feedback 404; another channel's feedback 403; too late
409 `invalid_state` (the record is closed, not the caller's rights); too many 409; then the file (400, 413).
"""

import contextlib
import hashlib
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import peewee

from models.feedback import Feedback, FeedbackAttachment
from models.writes import immediate
from rules.ids import iso, new_id, now_iso, utcnow
from rules.limits import MAX_ATTACHMENTS
from schemas.dump import dumper
from schemas.feedback import FeedbackAttachmentSchema
from services.errors import Conflict, Forbidden, NotFound, StorageUnavailable
from services.feedback.checks import check_log_file, check_screenshot
from services.feedback.queries import get_record
from services.files import clean_file_name, placed_file, real_file_inside

log = logging.getLogger(__name__)

UPLOAD_WINDOW = timedelta(days=7)
SCREENSHOT_SUFFIXES = {"jpg": ("jpg", "jpeg")}  # other formats: their stored extension
FOLDER = "feedback"


def _count(record):
    return FeedbackAttachment.select().where(FeedbackAttachment.feedback == record.id).count()


def _check_rules(record, channel, now):
    if record.channel != channel:
        raise Forbidden("attachments can only be added by the client channel that created the feedback")
    if record.created_at < iso(now - UPLOAD_WINDOW):
        raise Conflict(
            "attachments can only be added within 7 days of the feedback's creation", {"createdAt": record.created_at}
        )
    if _count(record) >= MAX_ATTACHMENTS:
        raise Conflict(
            f"this feedback already has {MAX_ATTACHMENTS} attachments, the most allowed",
            {"limit": MAX_ATTACHMENTS},
            code="attachment_limit",
        )


_dump_attachment = dumper(FeedbackAttachmentSchema)


def check_upload_allowed(feedback_id: str, channel: str, anonymous: bool) -> Feedback:
    """Who and when, before any upload byte is read: the Feedback row, or 403/404/409."""
    if anonymous:
        raise Forbidden(f"the anonymous channel {channel!r} cannot upload attachments")
    record = get_record(feedback_id)
    _check_rules(record, channel, utcnow())
    return record


def display_name(file_name: str | None, kind: str, extension: str) -> str:
    """The client's name, with the stored format's extension when a screenshot's name says another
    (a re-encoded PNG named `a.exe` is downloaded as `a.png`)."""
    name = clean_file_name(file_name, f"{kind}.{extension}")
    stem, dot, suffix = name.rpartition(".")
    if kind == "screenshot" and suffix.lower() not in SCREENSHOT_SUFFIXES.get(extension, (extension,)):
        name = f"{stem if dot and stem else name}.{extension}"
    return name


def add_attachment(
    record: Feedback, channel: str, kind: str, file_name: str | None, data: bytes, uploads_root: str
) -> dict[str, Any]:
    """Check the file, store it and its row; the attachment metadata dict (201 body)."""
    checked = check_screenshot(data) if kind == "screenshot" else check_log_file(file_name, data)
    attachment_id = new_id()
    stored_name = f"{attachment_id}.{checked.extension}"
    folder = Path(uploads_root) / FOLDER / record.feedback_id
    try:
        with placed_file(uploads_root, folder, stored_name, checked.data) as placement:
            with immediate():
                fresh = get_record(record.feedback_id)  # again, under the write lock
                _check_rules(fresh, channel, utcnow())  # again: a parallel upload may have taken the 10th place
                attachment = FeedbackAttachment.create(
                    attachment_id=attachment_id,
                    feedback=record.id,
                    kind=kind,
                    file_name=display_name(file_name, kind, checked.extension),
                    stored_name=stored_name,
                    content_type=checked.content_type,
                    size=len(checked.data),
                    sha256=hashlib.sha256(checked.data).hexdigest(),
                    created_at=now_iso(),
                )
                placement.settle()
    except OSError as exc:
        _remove_if_empty(folder)
        log.error("attachment for feedback %s not written: %s", record.feedback_id, type(exc).__name__)
        raise StorageUnavailable("the attachment could not be written to disk; try again later") from None
    except (peewee.DatabaseError, peewee.InterfaceError) as exc:
        _remove_if_empty(folder)
        log.error("attachment row for feedback %s not stored: %s", record.feedback_id, type(exc).__name__)
        raise StorageUnavailable(
            "the attachment could not be stored because the database is unavailable; nothing was saved, try again later"
        ) from None
    return _dump_attachment(attachment)


def _remove_if_empty(folder):
    """A first attachment that failed leaves no empty folder behind."""
    with contextlib.suppress(OSError):
        folder.rmdir()


def attachment_file(feedback_id: str, attachment_id: str, uploads_root: str) -> tuple[FeedbackAttachment, Path]:
    """(FeedbackAttachment, Path) of an existing attachment file, or NotFound."""
    attachment = (
        FeedbackAttachment.select(FeedbackAttachment, Feedback)
        .join(Feedback)
        .where((FeedbackAttachment.attachment_id == attachment_id) & (Feedback.feedback_id == feedback_id))
        .first()
    )
    if attachment is None:
        raise NotFound(f"no attachment {attachment_id} on feedback {feedback_id}")
    folder = Path(uploads_root) / FOLDER
    name = f"{attachment.feedback.feedback_id}/{attachment.stored_name}"
    path = real_file_inside(folder, name)
    if path is None:
        log.error("attachment %s: file %s is missing (or leads out of %s)", attachment_id, name, folder)
        raise NotFound(f"the file of attachment {attachment_id} is missing on the server")
    return attachment, path
