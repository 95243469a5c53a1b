"""Administrators set a feedback's processing status (docs/api.md §9, status)."""

from typing import Any

from models import AdminUser
from models.feedback import Feedback
from models.writes import immediate
from rules.ids import now_iso
from rules.vocabulary import FEEDBACK_STATUSES
from services.errors import Unauthorized, ValidationFailed
from services.feedback.queries import detail, get_record

UNSET = object()


def _still_allowed(username):
    """The session was checked by the guard; the account is read again in the write transaction so
    an admin deactivated or stripped of the permission a moment ago cannot sign a change."""
    user = AdminUser.get_or_none(AdminUser.username == username)
    if user is None or not user.active or not user.has_permission("feedback"):
        raise Unauthorized("your admin session is no longer valid; sign in again")
    return user.username


def set_status(feedback_id: str, status: str, username: str, admin_note: Any = UNSET) -> dict[str, Any]:
    """Apply the status change as `username`; the updated FeedbackDetail."""
    if status not in FEEDBACK_STATUSES:
        raise ValidationFailed(f"status must be one of {', '.join(FEEDBACK_STATUSES)}", {"status": ["unknown status"]})
    with immediate():
        record = get_record(feedback_id)
        admin = _still_allowed(username)
        now = now_iso()
        changes: dict = {Feedback.status: status, Feedback.updated_at: now}
        if status == "processed":
            changes[Feedback.processed_at] = now
            changes[Feedback.processed_by] = admin
        else:
            changes[Feedback.processed_at] = None
        if admin_note is not UNSET:
            changes[Feedback.admin_note] = admin_note
        Feedback.update(changes).where(Feedback.id == record.id).execute()
        return detail(Feedback.get_by_id(record.id))
