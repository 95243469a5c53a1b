"""Shapes shared by every list: query parameters, paging (assets, feedback)."""

from marshmallow import Schema, fields, pre_load, validate

from rules import accounts
from rules.limits import MAX_PAGE_SIZE

# Only keeps the row offset, (page - 1) * pageSize, inside SQLite's 64-bit OFFSET: any page past
# the last one is an empty page with the right totals.
MAX_PAGE = (2**63 - 1) // MAX_PAGE_SIZE


class QuerySchema(Schema):
    """Query parameters: an empty one (`?type=` from a plain HTML form) means not given, as the OpenAPI
    document says of every query parameter (`allowEmptyValue`)."""

    @pre_load
    def _drop_empty(self, data, **_kwargs):
        return {key: value for key, value in data.items() if not (isinstance(value, str) and not value.strip())}


class PageQuerySchema(QuerySchema):
    """page and pageSize: positive integers; pageSize at most 100."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_PAGE))
    pageSize = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PAGE_SIZE))


class PaginationSchema(Schema):
    page = fields.Integer(required=True)
    pageSize = fields.Integer(required=True)
    total = fields.Integer(required=True)
    totalPages = fields.Integer(required=True)


def timestamp(description=None, **kwargs):
    """A moment the service wrote: ISO 8601 UTC with milliseconds and Z (docs/api.md §4), `date-time` in
    the OpenAPI document."""
    metadata = {"format": "date-time", **({"description": description} if description else {})}
    return fields.String(metadata=metadata, **kwargs)


def day_or_moment(description, **kwargs):
    """An ISO date or date-time query parameter, passed on as written (the service reads it)."""
    return fields.String(
        load_default=None, metadata={"format": "date or date-time", "description": description}, **kwargs
    )


class KnownAccount(validate.OneOf):
    """One of the accounts WECHAT_ACCOUNTS configures (rules.accounts: the request's app's), so the
    error and the OpenAPI enum name the team's accounts, not a list fixed at import (docs/api.md §18)."""

    def __init__(self):
        super().__init__(accounts.codes())

    @property
    def choices(self):
        return accounts.codes()

    @choices.setter
    def choices(self, _value):
        pass

    @property
    def choices_text(self):
        return ", ".join(accounts.codes())

    @choices_text.setter
    def choices_text(self, _value):
        pass


def account(**kwargs):
    """A publicAccount field: a configured account's code."""
    return fields.String(validate=KnownAccount(), **kwargs)
