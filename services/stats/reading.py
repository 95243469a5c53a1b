"""What readers did, as the API and pages read it (docs/api.md §19): days ascending, totals, last error."""

import re
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

from peewee import fn

from models.live import TaskLive
from models.review import ReviewTask
from models.stats import FIGURES, StatsFetch, TaskDayStats
from rules.labels import STATS_ERROR_LABELS
from services.review.concurrency import get_task_row

CAMEL = {name: re.sub(r"_([a-z])", lambda found: found[1].upper(), name) for name in FIGURES}  # read_user: readUser


def day_dict(row: TaskDayStats) -> dict[str, Any]:
    return {"date": row.day, **{CAMEL[name]: getattr(row, name) for name in FIGURES}}


def totals(days: list[dict[str, Any]]) -> dict[str, int | None]:
    """Each figure summed over the days that have it; null when no day has it."""
    sums: dict[str, int | None] = {}
    for key in CAMEL.values():
        values = [day[key] for day in days if day[key] is not None]
        sums[key] = sum(values) if values else None
    return sums


def running_totals(days: list[dict[str, Any]]) -> Iterator[dict[str, int | None]]:
    """totals(days[:i + 1]) for each i in turn, in one pass."""
    sums: dict[str, int | None] = dict.fromkeys(CAMEL.values())
    for day in days:
        for key in sums:
            if day[key] is not None:
                sums[key] = (sums[key] or 0) + day[key]
        yield dict(sums)


def days_of(task_pk: int) -> list[dict[str, Any]]:
    """The task's days, ascending, in the API's words."""
    return [
        day_dict(row) for row in TaskDayStats.select().where(TaskDayStats.task == task_pk).order_by(TaskDayStats.day)
    ]


def task_stats(task_id: str) -> dict[str, Any]:
    """{"articleUrl", "days", "totals", "lastError"} of a task (404 for an unknown task)."""
    task = get_task_row(task_id)
    live = TaskLive.get_or_none(TaskLive.task == task)
    days, failed = days_of(task.id), last_failure(live)
    return {
        "articleUrl": live.article_url if live is not None and live.status == "live" else None,
        "days": days,
        "totals": totals(days),
        "lastError": f"{failed.day}: {failed.last_error}" if failed else None,
    }


def last_failure(live: TaskLive | None) -> StatsFetch | None:
    """The account's latest failed fetch of a day since the article went live; None when there is none."""
    if live is None or live.status != "live":
        return None
    # From the day before its UTC date: early enough in any team zone to keep every day it was read on.
    since = (date.fromisoformat((live.live_at or live.updated_at)[:10]) - timedelta(days=1)).isoformat()
    return (
        StatsFetch.select()
        .where((StatsFetch.account == live.account) & (StatsFetch.status == "failed") & (StatsFetch.day >= since))
        .order_by(StatsFetch.updated_at.desc())
        .first()
    )


def failure_words(task_id: str) -> tuple[str, str] | None:
    """(day, why) of the task's last failed fetch, in the language in force (the page's); None if none."""
    failed = last_failure(TaskLive.get_or_none(TaskLive.task == get_task_row(task_id)))
    if failed is None:
        return None
    label = STATS_ERROR_LABELS.get(failed.last_errcode) if failed.last_errcode is not None else None
    return failed.day, str(label) if label is not None else failed.last_error or ""


def total_reads(task_ids: list[str]) -> dict[str, int]:
    """{task id: reads over all days} for those of the tasks that have figures (the list's column)."""
    query = (
        TaskDayStats.select(ReviewTask.task_id, fn.SUM(TaskDayStats.read_user).alias("reads"))
        .join(ReviewTask)
        .where(ReviewTask.task_id.in_(task_ids) & TaskDayStats.read_user.is_null(False))
        .group_by(ReviewTask.task_id)
    )
    rows: list[Any] = list(query.tuples())  # (task id, reads)
    return {row[0]: int(row[1]) for row in rows}
