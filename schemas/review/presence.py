"""POST /api/review/tasks/{taskId}/presence: the task page's heartbeat (docs/api.md §15 Presence)."""

from marshmallow import Schema, fields, validate

from schemas.common import timestamp
from schemas.review.refs import StrictBoolean


class PresenceSchema(Schema):
    editing = StrictBoolean(
        required=True, metadata={"description": "true once this admin has typed into a field of the task page"}
    )
    leaving = StrictBoolean(
        load_default=False,
        metadata={
            "description": "true when the page is being left (its pagehide beacon): this admin is removed at once"
        },
    )

    page = fields.String(
        load_default="",
        # Anchored at the end by a look-ahead: `$` would let a final line break through.
        validate=validate.Regexp(r"^[A-Za-z0-9_-]{0,64}(?![\s\S])", error="at most 64 letters, digits, '-' or '_'"),
        metadata={
            "description": "the page's own id, the same in each of its heartbeats and its leave: a heartbeat "
            "of a page that has left does not bring its admin back, and an admin's other pages stay"
        },
    )


class ViewerSchema(Schema):
    username = fields.String(required=True)
    since = timestamp("first heartbeat of this stay on the page", required=True)
    editing = fields.Boolean(required=True)


class PresenceResultSchema(Schema):
    viewers = fields.List(
        fields.Nested(ViewerSchema),
        required=True,
        metadata={
            "description": "the other admins whose last heartbeat on this task is less than "
            "REVIEW_PRESENCE_SECONDS old, earliest first"
        },
    )
