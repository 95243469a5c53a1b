"""Shape of the sign-in request (docs/api.md §3), for the OpenAPI document: the route reads the fields
itself, since any failure is a redirect back to /login rather than a 400."""

from marshmallow import EXCLUDE, Schema, fields


class LoginSchema(Schema):
    """POST /api/auth/login as form fields or JSON; other fields are ignored."""

    class Meta:
        unknown = EXCLUDE

    username = fields.String(required=True)
    password = fields.String(required=True)
    next = fields.String(
        metadata={
            "description": "a local path to go to after signing in (also read from the "
            "query string); anything else means /review"
        }
    )
