"""The account's mass-send quota (docs/api.md §21): N sends a day or a month in REVIEW_TIME_ZONE, counted
from the editions scheduled, sending or sent in that window, before the platform is asked."""

from datetime import datetime, timedelta

from models.editions import Edition
from rules.ids import iso
from rules.vocabulary import EDITION_QUOTA
from services.settings import Settings


def window(at: datetime, period: str, settings: Settings) -> tuple[datetime, datetime]:
    """The day or month (in REVIEW_TIME_ZONE) holding `at`: [start, end)."""
    local = at.astimezone(settings.time_zone)
    start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "month":
        start = start.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    else:
        end = start + timedelta(days=1)
    # Through naive local dates, so a day across a clock change still starts at midnight.
    return (
        start.replace(tzinfo=None).replace(tzinfo=settings.time_zone),
        end.replace(tzinfo=None).replace(tzinfo=settings.time_zone),
    )


def used(account: str, start: datetime, end: datetime, besides: int | None = None) -> int:
    query = Edition.select().where(
        (Edition.account == account)
        & Edition.status.in_(EDITION_QUOTA)
        & (Edition.send_at >= iso(start))
        & (Edition.send_at < iso(end))
    )
    if besides is not None:
        query = query.where(Edition.id != besides)
    return query.count()


def left(account: str, at: datetime, settings: Settings, besides: int | None = None) -> tuple[int, datetime]:
    """(sends left in `at`'s window, the first moment at or after `at` when one is possible)."""
    limit, period = settings.mass_quota(account)
    start, end = window(at, period, settings)
    remaining = max(0, limit - used(account, start, end, besides))
    moment = at
    for _ in range(40):  # scheduled sends may fill a few windows ahead (at most 30 days are allowed)
        if used(account, *window(moment, period, settings), besides) < limit:
            break
        moment = window(moment, period, settings)[1]
    return remaining, moment
