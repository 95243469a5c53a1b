"""Shape of the health check's answer, for the OpenAPI document."""

from marshmallow import Schema, fields, validate


class HealthSchema(Schema):
    status = fields.String(
        required=True,
        validate=validate.OneOf(("ok", "unavailable")),
        metadata={"description": "ok (200) when the database answers, unavailable (503) otherwise"},
    )
