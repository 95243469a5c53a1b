"""The dataset export's query (docs/api.md §20): decisions as data for the agent, as JSON Lines."""

from marshmallow import fields, validate

from rules.vocabulary import DATASET_FORMATS
from schemas.common import QuerySchema, account, day_or_moment


class DatasetQuerySchema(QuerySchema):
    """GET /api/review/dataset; the dates are those of the decisions (UTC, as the lists' dates)."""

    format = fields.String(
        required=True,
        validate=validate.OneOf(DATASET_FORMATS),
        metadata={
            "description": "raw: one line per decided task; sft: prompt and approved article (OpenAI chat "
            "fine-tuning); dpo: preference pairs (OpenAI preference fine-tuning); trl-dpo: the same pairs "
            "as TRL's conversational prompt/chosen/rejected; kto: approved true, rejected false"
        },
    )
    from_ = day_or_moment("ISO date or datetime; decisions at or after it", data_key="from")
    to = day_or_moment("inclusive; a date-only value covers the day")
    account = account(load_default=None, metadata={"description": "only this account's tasks"})
    limit = fields.Integer(
        load_default=None,
        validate=validate.Range(min=1),
        metadata={"description": "at most this many lines (absent: every one)"},
    )
