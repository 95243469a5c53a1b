"""Fetching what readers did (docs/api.md §19): an account's day is one StatsFetch row, claimed in the write
lock so several processes fetch it once."""

import logging
import math
import re
import time
from datetime import date, datetime, timedelta
from typing import Any

from flask_babel import force_locale
from peewee import fn

from models import immediate
from models.base import insert_rows
from models.live import TaskLive
from models.review import ReviewTask
from models.stats import FIGURES, MAX_FIGURE, StatsFetch, TaskDayStats
from rules.ids import iso, now_iso, parse_iso, utcnow
from rules.labels import STATS_ERROR_LABELS
from rules.vocabulary import STATS_PLATFORM_DAYS
from services.background import Job, attempts_of, claim, job, lease_of
from services.owners import this_process
from services.platform.client import PLATFORM_ZONE, PlatformError, client_for
from services.review.webhooks import enqueue_stats
from services.settings import Settings
from services.stats.reading import day_dict, running_totals

log = logging.getLogger(__name__)
MAX_ATTEMPTS = attempts_of("stats")
RETRY_AFTER = timedelta(hours=1)
STOPPED = "the process stopped"  # a fetch's error when its process stopped during its last attempt
CARRY_DAYS = 2  # a day whose retries midnight cut short is still retried the next day or two
FIGURE_FIELDS = [getattr(TaskDayStats, name) for name in FIGURES]
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")  # stat_date exactly (fromisoformat alone takes 20261126 and week dates)


def error_text(exc: PlatformError) -> str:
    """The error as the API says it: the errcode's meaning (rules/labels.py), or the platform's words."""
    label = STATS_ERROR_LABELS.get(exc.errcode) if exc.errcode is not None else None
    if label is None:
        return str(exc)
    with force_locale("en"):
        return str(label)


def platform_day(moment: datetime) -> str:
    """The platform's day (Beijing's, PLATFORM_ZONE) of a moment: what a publish day and a stat_date are."""
    return moment.astimezone(PLATFORM_ZONE).date().isoformat()


def platform_yesterday(now: datetime | None = None) -> str:
    """The last day the platform gives figures for (datacube's end_date at most yesterday, Beijing's)."""
    return (date.fromisoformat(platform_day(now or utcnow())) - timedelta(days=1)).isoformat()


def due_day(settings: Settings, now: datetime | None = None) -> str | None:
    """The day to fetch now: yesterday in the team's zone from WECHAT_STATS_HOUR there (None before it), but
    never after the platform's yesterday: east of Beijing the team's yesterday can be its today (docs/api.md
    §19)."""
    now = now or utcnow()
    local = now.astimezone(settings.time_zone)
    if local.hour < settings.stats_hour:
        return None
    return min((local.date() - timedelta(days=1)).isoformat(), platform_yesterday(now))


def first_publish_day(settings: Settings, day: str) -> str:
    """The earliest publish day whose articles still count on `day`: WECHAT_STATS_DAYS days up to and
    including it, at most the platform's STATS_PLATFORM_DAYS (docs/api.md §19)."""
    return (date.fromisoformat(day) - timedelta(days=min(settings.stats_days, STATS_PLATFORM_DAYS) - 1)).isoformat()


def accounts_with_live(settings: Settings, day: str) -> list[str]:
    """Accounts with an article that went live from first_publish_day to the end of `day` (the platform's days)."""
    zone = PLATFORM_ZONE
    since = iso(datetime.fromisoformat(first_publish_day(settings, day)).replace(tzinfo=zone))
    until = iso(datetime.fromisoformat(day).replace(tzinfo=zone) + timedelta(days=1))
    rows = (
        TaskLive.select(TaskLive.account)
        .where((TaskLive.status == "live") & (TaskLive.live_at >= since) & (TaskLive.live_at < until))
        .distinct()
    )
    return sorted(row.account for row in rows if row.account in settings.accounts)


def _claim(account: str, day: str, force: bool, settings: Settings) -> StatsFetch | None:
    """The day's fetch row for the account, now running and ours; None when it is done, running
    elsewhere, out of attempts or not yet due for a retry (`force`: the CLI's backfill takes it anyway
    unless another process runs it). A fetch whose process stopped during its last attempt is marked
    failed, not left running for ever."""
    key, now = (StatsFetch.account == account) & (StatsFetch.day == day), now_iso()
    running = StatsFetch.status == "running"
    elsewhere = running & (StatsFetch.updated_at > iso(utcnow() - lease_of("stats", settings)))
    spent = (StatsFetch.attempts >= MAX_ATTEMPTS) | (fn.COALESCE(StatsFetch.next_attempt_at, "") > now)
    stopped = key & running & ~elsewhere & spent
    if not force and StatsFetch.select().where(stopped).exists():
        with immediate():
            StatsFetch.update(status="failed", last_error=STOPPED, updated_at=now).where(stopped).execute()
    ours = {StatsFetch.status: "running", StatsFetch.owner: this_process(), StatsFetch.updated_at: now}
    if not StatsFetch.select().where(key).exists():  # the day's first ask
        first = StatsFetch.insert({**ours, StatsFetch.account: account, StatsFetch.day: day, StatsFetch.attempts: 1})
        with immediate():
            return StatsFetch.get(key) if first.on_conflict_ignore().as_rowcount().execute() else None
    due = key & ~elsewhere if force else key & ~elsewhere & (StatsFetch.status != "done") & ~spent
    return claim(StatsFetch, due, (StatsFetch.id,), {**ours, StatsFetch.attempts: StatsFetch.attempts + 1})


def _figures(entry: dict[str, Any]) -> dict[str, int | None] | None:
    """A detail_list entry's figures (absent: null); None unless each is a whole number from 0 to MAX_FIGURE."""
    values = {name: entry.get(name) for name in FIGURES}
    if any(value is not None and (type(value) is not int or not 0 <= value <= MAX_FIGURE) for value in values.values()):
        return None
    return values


def _live_days(account: str) -> dict[str, tuple[int, str, str]]:
    """{msg_data_id: (task pk, first, last)} of the account's live articles (an edition's article:
    `<msg_data_id>_<index>`, docs/api.md §21): the platform's days (Beijing's) it may be filed under. The day
    it was found live, and also the day before when it was asked for then (its `at` or `submitted_at`; an
    edition's row is written once found sent, its `at` the send's): a poll can find an article published at
    23:40 only after midnight, and datacube files it under its publish day."""
    rows = TaskLive.select(
        TaskLive.task, TaskLive.msg_data_id, TaskLive.live_at, TaskLive.updated_at, TaskLive.submitted_at, TaskLive.at
    ).where((TaskLive.account == account) & (TaskLive.status == "live") & TaskLive.msg_data_id.is_null(False))
    found: dict[str, tuple[int, str, str]] = {}
    for row in rows:
        went_live = parse_iso(row.live_at or row.updated_at)
        last = platform_day(went_live)
        asked = [moment for moment in (row.at, row.submitted_at) if moment]
        sent = platform_day(parse_iso(min(asked))) if asked else last
        first = min(max(sent, platform_day(went_live - timedelta(days=1))), last)
        found[str(row.msg_data_id)] = (row.task_id, first, last)
    return found


class UnreadableAnswer(ValueError):
    """An answer that is not the platform's shape: the fetch fails with this reason and is not asked again
    by the job, since the same question brings the same answer (docs/api.md §19)."""


def publish_days(live: dict[str, tuple[int, str, str]], first: str, day: str) -> list[str]:
    """The distinct days from `first` to `day` the live articles may be filed under: one call each."""
    days: set[str] = set()
    for _task, since, until in live.values():
        days.update(d for d in (since, until) if first <= d <= day)  # the two are a day apart at most
    return sorted(days)


def daily_figures(totals: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """{stat_date: that day's own figures} of one article's running totals (docs/api.md §19): each figure
    the difference from the highest total before it (the publish day: the total itself), never below 0, so
    the days add up to the latest total; a figure the entry leaves out is null that day."""
    highest: dict[str, int] = {}
    days: dict[str, dict[str, Any]] = {}
    for stat_date, figures in sorted(totals, key=lambda entry: entry[0]):
        own: dict[str, Any] = {}
        for name, value in figures.items():
            if value is None:
                own[name] = None
                continue
            own[name] = max(0, value - highest.get(name, 0))
            highest[name] = max(highest.get(name, 0), value)
        days[stat_date] = own
    return days


def read_answer(
    account: str, day: str, items: Any, settings: Settings, live: dict[str, tuple[int, str, str]] | None = None
) -> dict[tuple[int, str], dict[str, Any]]:
    """{(task pk, day): that day's own figures} of one answer's items matched to a live task of the account,
    from the article's first day to `day` (entries after it are its own fetch's), read before the write
    lock; the entries docs/api.md §19 skips are counted in the log. UnreadableAnswer when the answer is not
    the platform's shape."""
    if not isinstance(items, list):
        raise UnreadableAnswer("its list is not a list")
    live = _live_days(account) if live is None else live
    kept: dict[tuple[int, str], dict[str, Any]] = {}
    skipped = 0
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("detail_list", []), list):
            raise UnreadableAnswer("an item is not an object with a detail_list")
        msgid = str(item.get("msgid") or "")
        msg_data_id, _, index = msgid.partition("_")
        # An edition's article is kept by its whole msgid; a task live alone is its message's first article.
        found = live.get(msgid) or (live.get(msg_data_id) if index in ("", "1") else None)
        if found is None:
            continue
        task_pk, first_day, _last_day = found
        totals = []
        for entry in item.get("detail_list") or []:
            stat_date = entry.get("stat_date") if isinstance(entry, dict) else None
            figures = _figures(entry) if isinstance(entry, dict) else None
            if figures is None or not isinstance(stat_date, str) or not _is_day(stat_date) or stat_date < first_day:
                skipped += 1
            elif stat_date <= day:
                totals.append((stat_date, figures))
        kept.update({(task_pk, stat_date): own for stat_date, own in daily_figures(totals).items()})
    if skipped:
        log.warning(
            "statistics of %s for %s: %s entries skipped (a date not YYYY-MM-DD or before the article went "
            "live, or a figure not a whole number from 0 to %s)",
            account,
            day,
            skipped,
            MAX_FIGURE,
        )
    return kept


def _is_day(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return bool(DAY.fullmatch(value))


def store(kept: dict[tuple[int, str], dict[str, Any]], told_from: str) -> int:
    """Write the figures (inside immediate()): one read of what the tasks hold, one batched upsert, then one
    review_task.stats per task and day new to the store from `told_from` on (a refetch replaces silently; an
    older day is kept without a webhook). Linear in the answer."""
    if not kept:
        return 0
    tasks = sorted({task_pk for task_pk, _day in kept})
    before = set(TaskDayStats.select(TaskDayStats.task, TaskDayStats.day).where(TaskDayStats.task.in_(tasks)).tuples())
    now = now_iso()
    rows = [{"task": task_pk, "day": day, **figures, "fetched_at": now} for (task_pk, day), figures in kept.items()]
    insert_rows(TaskDayStats, rows, conflict=("task", "day"))
    fresh = {key for key in kept if key not in before}
    if fresh:
        ids: dict[int, str] = {
            row.id: row.task_id
            for row in ReviewTask.select(ReviewTask.id, ReviewTask.task_id).where(ReviewTask.id.in_(tasks))
        }
        days: dict[int, list[dict[str, Any]]] = {}
        for row in (
            TaskDayStats.select(TaskDayStats.task.alias("task_id"), TaskDayStats.day, *FIGURE_FIELDS)
            .where(TaskDayStats.task.in_(tasks))
            .order_by(TaskDayStats.day)
            .namedtuples()
        ):
            days.setdefault(row.task_id, []).append(day_dict(row))
        enqueue_stats(
            [
                (ids[task_pk], entry, to_date)  # once per task and day, with the totals up to it
                for task_pk, so_far in days.items()
                for entry, to_date in zip(so_far, running_totals(so_far), strict=True)
                if (task_pk, entry["date"]) in fresh and entry["date"] >= told_from
            ]
        )
    return len(rows)


def _finish(row: StatsFetch, **changes: Any) -> bool:
    """End the claimed fetch (inside immediate()) only if it is still the one this call claimed; whether it was."""
    still = (
        (StatsFetch.id == row.id)
        & (StatsFetch.status == "running")
        & (StatsFetch.owner == row.owner)
        & (StatsFetch.attempts == row.attempts)
    )
    ours = StatsFetch.update(**changes, updated_at=now_iso()).where(still).execute() == 1
    if not ours:
        log.warning(
            "statistics of %s for %s: the fetch was taken over meanwhile; this result was dropped", row.account, row.day
        )
    return ours


def fetch_day(account: str, day: str, settings: Settings, force: bool = False) -> dict[str, Any] | None:
    """Fetch one account's day: {"account", "day", "stored", "error", "calls"}; None when another process has
    it (or it is done and not forced). One getarticletotaldetail per publish day of the account's live
    articles within the window, each day's own figure the difference of two running totals (docs/api.md
    §19). An answer marked is_delay leaves the day `delayed`, asked again at the next pass. Whatever goes
    wrong ends the row `failed` with a reason, never `running`."""
    row = _claim(account, day, force, settings)
    if row is None:
        return None
    errcode, calls, retry = None, 0, True
    try:
        client = client_for(account, settings)
        live = _live_days(account)
        kept: dict[tuple[int, str], dict[str, Any]] = {}
        delayed = False
        for publish_day in publish_days(live, first_publish_day(settings, day), day):
            answer = client.article_totals(publish_day)
            calls += 1
            delayed = delayed or answer["is_delay"] is True
            kept.update(read_answer(account, day, answer["list"], settings, live))
        with immediate():
            told_from = (date.fromisoformat(day) - timedelta(days=settings.stats_days - 1)).isoformat()
            # The claim first: a fetch taken over meanwhile stores nothing (the other one will).
            ending = {"status": "delayed", "attempts": 0} if delayed else {"status": "done"}
            done = _finish(row, **ending, last_error=None, last_errcode=None, next_attempt_at=None)
            stored = store(kept, told_from) if done else 0
        return {"account": account, "day": day, "stored": stored, "error": None, "calls": calls}
    except PlatformError as exc:
        error, errcode = error_text(exc), exc.errcode
    except UnreadableAnswer as exc:  # the platform's doing, not ours: one line, and not asked again by the job
        error, retry = f"the platform's answer could not be read: {exc}", False
    except Exception as exc:  # a store that failed: the row must not stay running
        log.exception("statistics of %s for %s could not be stored", account, day)
        error = f"the figures could not be stored ({type(exc).__name__}: {str(exc)[:200]})"
    log.warning("statistics of %s for %s: %s (attempt %s)", account, day, error, row.attempts)
    again = {"next_attempt_at": iso(utcnow() + RETRY_AFTER) if retry else None}
    if not retry:
        again["attempts"] = MAX_ATTEMPTS
    with immediate():
        _finish(row, status="failed", last_error=error, last_errcode=errcode, **again)
    return {"account": account, "day": day, "stored": 0, "error": error, "calls": calls}


def _unfinished(day: str, settings: Settings) -> list[tuple[str, str]]:
    """(account, day) of the CARRY_DAYS before `day` whose fetch failed or stopped, with attempts left, or was
    answered is_delay: midnight must not leave a figure that was not final (past its article's window, no later
    day's fetch asks for it again)."""
    since = (date.fromisoformat(day) - timedelta(days=CARRY_DAYS)).isoformat()
    stopped = (StatsFetch.status == "running") & (StatsFetch.updated_at < iso(utcnow() - lease_of("stats", settings)))
    rows = StatsFetch.select(StatsFetch.account, StatsFetch.day).where(  # a stopped one out of attempts: settled
        (
            ((StatsFetch.status == "failed") & (StatsFetch.attempts < MAX_ATTEMPTS))
            | stopped
            | (StatsFetch.status == "delayed")
        )
        & (StatsFetch.day >= since)
        & (StatsFetch.day < day)
    )
    return [(row.account, row.day) for row in rows]


def daily_step(settings: Settings, until: float = math.inf) -> list[dict[str, Any]]:
    """The scheduled part: yesterday's figures for every account that needs them, once; and the retries
    left of the days before, which midnight cut short. Accounts left at `until` wait for the next pass."""
    day = due_day(settings)
    if day is None:
        return []
    wanted = [(account, day) for account in accounts_with_live(settings, day)] + _unfinished(day, settings)
    results = []
    for account, which in wanted:
        if account not in settings.accounts or time.monotonic() >= until:
            continue
        try:  # one account's trouble never stops the others
            result = fetch_day(account, which, settings)
        except Exception:
            log.exception("statistics of %s for %s: the fetch stopped", account, which)
            continue
        if result is not None:
            results.append(result)
    return results


def stats_job(settings: Settings) -> Job:
    """The daily statistics (WECHAT_STATS_ENABLED): a look at start, then once a minute."""
    return job("stats", lambda until: daily_step(settings, until))
