"""Fetching what readers did (docs/api.md §19): every day at WECHAT_STATS_HOUR (in REVIEW_TIME_ZONE) the
day before is asked of datacube/getarticletotaldetail for each account with an article that went live
within WECHAT_STATS_DAYS; items are matched to tasks by msgid (`<msg_data_id>_<index>`). A day is one
StatsFetch row per account, claimed in the write lock, so several processes fetch it once; an error is
kept with its meaning and retried an hour later, at most 3 attempts in all (a day whose retries midnight
cut short keeps them for the next two days).
"""
import logging
from datetime import date, datetime, timedelta
from typing import Any

from flask_babel import force_locale

from models import immediate
from models.live import TaskLive
from models.review import ReviewTask
from models.stats import FIGURES, StatsFetch, TaskDayStats
from rules.ids import iso, now_iso, utcnow
from rules.labels import STATS_ERROR_LABELS
from services.platform.client import PlatformError, client_for
from services.publishing.owners import this_process
from services.review.webhooks import enqueue_stats
from services.settings import Settings
from services.stats.reading import days_of, totals

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3
RETRY_AFTER = timedelta(hours=1)
STALE_RUN = timedelta(minutes=10)  # a fetch whose process stopped is taken again after this
CARRY_DAYS = 2  # a day whose retries midnight cut short is still retried the next day or two


def error_text(exc: PlatformError) -> str:
    """The error as the API says it: the errcode's meaning (rules/labels.py), or the platform's words."""
    label = STATS_ERROR_LABELS.get(exc.errcode) if exc.errcode is not None else None
    if label is None:
        return str(exc)
    with force_locale("en"):
        return str(label)


def due_day(settings: Settings, now: datetime | None = None) -> str | None:
    """The day to fetch now (yesterday in the team's zone), or None before WECHAT_STATS_HOUR."""
    local = (now or utcnow()).astimezone(settings.time_zone)
    if local.hour < settings.stats_hour:
        return None
    return (local.date() - timedelta(days=1)).isoformat()


def accounts_with_live(settings: Settings, day: str) -> list[str]:
    """Accounts with an article that went live within WECHAT_STATS_DAYS before the end of `day`."""
    since = iso(datetime.fromisoformat(day).replace(tzinfo=settings.time_zone) - timedelta(days=settings.stats_days))
    rows = (TaskLive.select(TaskLive.account).where((TaskLive.status == "live") & (TaskLive.live_at >= since))
            .distinct())
    return sorted(row.account for row in rows if row.account in settings.accounts)


def _claim(account: str, day: str, force: bool) -> StatsFetch | None:
    """The day's fetch row for the account, now running and ours; None when it is done, running
    elsewhere, out of attempts or not yet due for a retry (`force`: the CLI's backfill takes it anyway
    unless another process runs it)."""
    now = now_iso()
    with immediate():
        row = StatsFetch.get_or_none((StatsFetch.account == account) & (StatsFetch.day == day))
        if row is None:
            row = StatsFetch(account=account, day=day, status="running", attempts=0, updated_at=now)
        elif row.status == "running" and datetime.fromisoformat(row.updated_at.replace("Z", "+00:00")) \
                > utcnow() - STALE_RUN:
            return None
        elif not force and (row.status == "done" or row.attempts >= MAX_ATTEMPTS
                            or (row.next_attempt_at or "") > now):
            return None
        row.status, row.owner, row.updated_at = "running", this_process(), now
        row.attempts += 1
        row.save()
        return row


def _figures(entry: dict[str, Any]) -> dict[str, int | None]:
    """A detail_list entry's figures; an absent (or non-numeric) one stays null, never 0."""
    values: dict[str, int | None] = {}
    for name in FIGURES:
        value = entry.get(name)
        values[name] = value if type(value) is int and value >= 0 else None
    return values


def _store(account: str, items: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Rows for every item matched to a task of the account; (task pk, day) of each stored row."""
    by_msg = {row.msg_data_id: row for row in TaskLive.select().where(
        (TaskLive.account == account) & TaskLive.msg_data_id.is_null(False))}
    stored, fresh = [], []
    for item in items:
        msg_data_id, _, index = str(item.get("msgid") or "").partition("_")
        live = by_msg.get(msg_data_id)
        if live is None or index not in ("", "1"):  # a task's draft is one article: the message's first
            continue
        for entry in item.get("detail_list") or []:
            day = str(entry.get("stat_date") or item.get("ref_date") or "") if isinstance(entry, dict) else ""
            try:
                date.fromisoformat(day)
            except ValueError:
                continue
            values = {**_figures(entry), "fetched_at": now_iso()}
            existing = TaskDayStats.get_or_none((TaskDayStats.task == live.task_id) & (TaskDayStats.day == day))
            if existing is None:
                TaskDayStats.create(task=live.task_id, day=day, **values)
                fresh.append((live.task_id, day))
            else:
                TaskDayStats.update(**values).where(TaskDayStats.id == existing.id).execute()
            stored.append((live.task_id, day))
    for task_pk, day in fresh:  # the agent hears once per task and day (a refetch replaces silently)
        so_far = [d for d in days_of(task_pk) if d["date"] <= day]
        enqueue_stats(ReviewTask.get_by_id(task_pk).task_id, so_far[-1], totals(so_far))
    return stored


def fetch_day(account: str, day: str, settings: Settings, force: bool = False) -> dict[str, Any] | None:
    """Fetch one account's day: {"account", "day", "stored", "error"}; None when another process has it
    (or it is done and not forced)."""
    row = _claim(account, day, force)
    if row is None:
        return None
    try:
        items = client_for(account, settings).article_totals(day)
    except PlatformError as exc:
        error = error_text(exc)
        log.warning("statistics of %s for %s: %s (attempt %s)", account, day, error, row.attempts)
        with immediate():
            StatsFetch.update(status="failed", last_error=error, last_errcode=exc.errcode, updated_at=now_iso(),
                              next_attempt_at=iso(utcnow() + RETRY_AFTER)).where(StatsFetch.id == row.id).execute()
        return {"account": account, "day": day, "stored": 0, "error": error}
    with immediate():
        stored = _store(account, items)
        StatsFetch.update(status="done", last_error=None, last_errcode=None, updated_at=now_iso(),
                          next_attempt_at=None).where(StatsFetch.id == row.id).execute()
    return {"account": account, "day": day, "stored": len(stored), "error": None}


def _unfinished(day: str) -> list[tuple[str, str]]:
    """(account, day) of the CARRY_DAYS before `day` whose fetch failed, or whose process stopped during
    it, with attempts left."""
    since = (date.fromisoformat(day) - timedelta(days=CARRY_DAYS)).isoformat()
    stopped = (StatsFetch.status == "running") & (StatsFetch.updated_at < iso(utcnow() - STALE_RUN))
    rows = StatsFetch.select(StatsFetch.account, StatsFetch.day).where(
        ((StatsFetch.status == "failed") | stopped) & (StatsFetch.attempts < MAX_ATTEMPTS)
        & (StatsFetch.day >= since) & (StatsFetch.day < day))
    return [(row.account, row.day) for row in rows]


def daily_step(settings: Settings) -> list[dict[str, Any]]:
    """The scheduled part: yesterday's figures for every account that needs them, once; and the retries
    left of the days before, which midnight cut short."""
    day = due_day(settings)
    if day is None:
        return []
    wanted = [(account, day) for account in accounts_with_live(settings, day)] + _unfinished(day)
    return [result for account, which in wanted
            if account in settings.accounts and (result := fetch_day(account, which, settings)) is not None]
