"""Sending an edition exactly once, and hearing how it went (docs/api.md §21 "Sending exactly once", "The
result"). Every change is compare-and-set on the edition's version: a late answer never lands on a newer state.
"""

import logging
import time
import xml.etree.ElementTree as ET
from datetime import timedelta
from typing import Any

from flask_babel import force_locale
from peewee import Case

from models import immediate
from models.editions import EarlyMassEvent, Edition
from models.live import TaskLive
from models.review import ReviewTask
from rules.articles import article_url
from rules.client_input import whole_number
from rules.ids import iso, now_iso, parse_iso, utcnow
from rules.labels import EDITION_FAILURE_LABELS, edition_failure
from services import hostile_xml
from services.background import HOURLY, Job, attempts_of, claim, job, lease_of, poll_delay, wake
from services.editions.checks import refusal_words, refusals
from services.editions.drafts import combined_draft
from services.owners import orphaned, this_process
from services.platform.client import TOKEN_ERRORS, PlatformError, client_for
from services.review import save_task
from services.review.state_machine import find_edition_rule, find_live_rule
from services.review.timeline import add_event
from services.review.webhooks import enqueue_live_outcome
from services.settings import Settings
from services.team.outbox import edition_ended

log = logging.getLogger(__name__)
JOB = "edition"  # the scheduler's job (services/background.py); wake(JOB) when an editor sends one now
RETRY = timedelta(seconds=60)  # 45066, or no answer: sendall again, same clientmsgid
MAX_ATTEMPTS = attempts_of(JOB)
POLL_FOR = timedelta(hours=24)
# The edition's counts, from MASSSENDJOBFINISH's elements; one that is not a number from 0 to COUNT_MAX is
# stored as null, not as 0 (docs/api.md §21 "The result").
_COUNTS = {"total": "TotalCount", "filter": "FilterCount", "sent": "SentCount", "error": "ErrorCount"}
COUNT_MAX = 2**31 - 1


# No answer, or the token refused and none to be had (the platform took nothing): tried again in a minute.
UNSENT = (None, *TOKEN_ERRORS)


def _cas(row: Edition, changes: dict[str, Any]) -> Edition | None:
    """`changes` applied if the edition is still at the version read (inside immediate()); the fresh row,
    or None (logged) when it moved on."""
    updated = (
        Edition.update(**changes, version=Edition.version + 1, updated_at=now_iso())
        .where((Edition.id == row.id) & (Edition.version == row.version))
        .execute()
    )
    if not updated:
        log.warning("edition %s moved on since it was read; a late result was dropped", row.edition_id)
        return None
    return Edition.get_by_id(row.id)


def _due_send(now: str) -> Any:
    """Editions whose send is due: their time came, a repeat is due, or their sender stopped."""
    unsent = (Edition.status == "sending") & Edition.msg_id.is_null()
    stopped = orphaned(Edition, unsent & Edition.owner.is_null(False), Edition.version)
    return ((Edition.status == "scheduled") & (Edition.send_at <= now)) | (
        unsent & ((Edition.next_at <= now) | stopped)
    )


def _claim_send(settings: Settings) -> Edition | None:
    """One edition whose send is due, now ours; or, when one of its tasks went live alone or changed since it
    was scheduled, that edition `failed`. Claimed at the version read: every change moves it."""

    def proposable(row: Edition) -> bool:
        """One way to readers per article (docs/api.md §21 "Sending exactly once"): before anything reaches
        sendall (no combined draft recorded yet), its tasks must still pass the rules of proposing."""
        if row.status == "scheduled" or row.draft_media_id is None:
            if refused := refusals(row.account, row.task_ids, besides=row.id):
                _failed(row, settings, "tasks_changed", refusal_words(refused)[:1000])
                return False
        return True

    scheduled = Edition.status == "scheduled"
    changes = {
        Edition.status: "sending",
        Edition.owner: this_process(),
        Edition.next_at: iso(utcnow() + lease_of(JOB, settings)),  # without an answer by then: repeated
        Edition.attempts: Edition.attempts + 1,
        # The tasks' drafts as they are now, not as previewed.
        Edition.draft_media_id: Case(None, [(scheduled, None)], Edition.draft_media_id),
        Edition.version: Edition.version + 1,
        Edition.updated_at: now_iso(),
    }
    return claim(Edition, _due_send(now_iso()), (Edition.send_at,), changes, version=Edition.version, vet=proposable)


def send(row: Edition, settings: Settings) -> None:
    """The combined draft (once per edition), then sendall; no transaction is open during either call."""
    try:
        client = client_for(row.account, settings)
    except PlatformError as exc:  # its credentials are gone: nothing can reach the platform now
        with immediate():  # an earlier attempt may have reached it
            _failed(row, settings, "no_answer" if row.attempts > 1 else "not_sent", str(exc))
        return
    if row.draft_media_id is None:
        try:
            media_id = combined_draft(client, row.task_ids)
        except (PlatformError, LookupError) as exc:
            with immediate():
                _failed(row, settings, "draft", str(exc))
            return
        with immediate():
            claimed = _cas(row, {"draft_media_id": media_id})
        if claimed is None:
            return
        row = claimed
    try:
        answer = client.mass_send(str(row.draft_media_id), row.edition_id, row.tag_id, row.ignore_reprint)
    except PlatformError as exc:
        with immediate():
            _refused(row, settings, exc)
        return
    first = poll_delay(settings.publish_poll_delays, 0)
    with immediate():
        _recorded(row, {**answer, "owner": None, "next_at": iso(utcnow() + timedelta(seconds=first))}, settings)
    wake(JOB, after=first)


def _recorded(row: Edition, changes: dict[str, Any], settings: Settings) -> None:
    """The send's msg_id recorded (inside immediate()), and its event applied if it came first."""
    if _cas(row, changes) is None:
        return
    key = (EarlyMassEvent.account == row.account) & (EarlyMassEvent.msg_id == changes["msg_id"])
    early = EarlyMassEvent.get_or_none(key)
    if early is not None:
        early.delete_instance()
        mass_finished(row.account, hostile_xml.read(early.xml), settings)


def _refused(row: Edition, settings: Settings, exc: PlatformError) -> None:
    if exc.errcode == 45065:  # sent already (a repeat after a stop): the first send's msg_id
        msg_id = exc.answer.get("msg_id")
        log.info("edition %s: the platform had it already (45065)", row.edition_id)
        if msg_id:
            _recorded(
                row,
                {
                    "msg_id": str(msg_id),
                    "msg_data_id": str(exc.answer.get("msg_data_id") or "") or None,
                    "owner": None,
                    "next_at": now_iso(),
                },
                settings,
            )
        else:
            _sent(row, settings, None, {})
    elif exc.errcode == 45066 or (exc.errcode in UNSENT and row.attempts < MAX_ATTEMPTS):
        log.warning("edition %s: sendall answered %s; asked again in a minute", row.edition_id, exc)
        _cas(row, {"owner": None, "next_at": iso(utcnow() + RETRY)})
    elif exc.errcode in UNSENT or row.attempts > 1:
        # A repeat's refusal does not say the first try sent nothing: its draft gone (40007) or the day's
        # quota spent (45028) may be that send's doing. Followers may have it: never "free again".
        _failed(row, settings, "no_answer", str(exc))
    elif f"errcode_{exc.errcode}" in EDITION_FAILURE_LABELS:
        _failed(row, settings, f"errcode_{exc.errcode}")
    else:
        _failed(row, settings, "platform", str(exc))


def _claim_poll() -> Edition | None:
    """One edition whose mass/get is due, its next an hour on until this one is answered (so another process
    does not ask too); read outside the write lock, claimed compare-and-set on what made it due."""
    return claim(
        Edition,
        (Edition.status == "sending") & Edition.msg_id.is_null(False) & (Edition.next_at <= now_iso()),
        (Edition.next_at,),
        {
            Edition.polls: Edition.polls + 1,
            Edition.next_at: iso(utcnow() + timedelta(seconds=HOURLY)),
            Edition.version: Edition.version + 1,  # as _cas(): a late answer about the edition as read is dropped
            Edition.updated_at: now_iso(),
        },
    )


def poll(row: Edition, settings: Settings) -> None:
    """message/mass/get for one edition still sending; the event usually comes first."""
    try:
        status = client_for(row.account, settings).mass_status(str(row.msg_id))
    except PlatformError as exc:
        status = None
        log.warning("message/mass/get for edition %s: %s (asked again later)", row.edition_id, exc)
    with immediate():
        if status == "SEND_SUCCESS":
            _sent(row, settings, None, {})
        elif status in ("SEND_FAIL", "DELETE"):
            _failed(row, settings, "send_fail" if status == "SEND_FAIL" else "deleted")
        elif utcnow() - parse_iso(row.send_at or row.updated_at) > POLL_FOR:
            _failed(row, settings, "no_result")
        else:
            delay = poll_delay(settings.publish_poll_delays, row.polls)
            _cas(row, {"next_at": iso(utcnow() + timedelta(seconds=delay))})
            wake(JOB, after=delay)


def _titles(tasks: list[ReviewTask]) -> list[str]:
    return [str((task.selections or {}).get("title") or task.topic) for task in tasks]


def _tasks(row: Edition) -> list[ReviewTask]:
    found = {task.task_id: task for task in ReviewTask.select().where(ReviewTask.task_id.in_(row.task_ids))}
    return [found[task_id] for task_id in row.task_ids if task_id in found]


def _sent(row: Edition, settings: Settings, counts: dict[str, int | None] | None, urls: dict[int, str | None]) -> bool:
    """The edition is sent: each task live through it, the agent told per task, the team once."""
    if find_edition_rule(row.status, "sent") is None:
        return False
    now = now_iso()
    kept = [urls.get(index) for index in range(1, len(row.task_ids) + 1)]
    fresh = _cas(
        row,
        {
            "status": "sent",
            "counts": counts,
            "article_urls": kept,
            "sent_at": now,
            "next_at": None,
            "owner": None,
            "fail_reason": None,
            "fail_code": None,
            "fail_detail": None,
        },
    )
    if fresh is None:
        return False
    tasks = _tasks(fresh)
    for index, task in enumerate(tasks, 1):
        fields = {
            "account": fresh.account,
            "draft_media_id": fresh.draft_media_id or "",
            "status": "live",
            "at": fresh.send_at or now,
            "publish_id": None,
            "article_id": None,
            "msg_data_id": f"{fresh.msg_data_id}_{index}" if fresh.msg_data_id else None,
            "article_url": kept[index - 1],
            "fail_reason": None,
            "fail_code": None,
            "fail_detail": None,
            "owner": None,
            "submitted_at": now,
            "next_poll_at": None,
            "live_at": now,
            "via": "mass_send",
            "edition_id": fresh.edition_id,
            "updated_at": now,
        }
        live = TaskLive.get_or_none(TaskLive.task == task) or TaskLive(task=task, created_at=now, polls=0)
        if find_live_rule(live.status if live.id else None, "mass_sent") is None:
            log.warning("task %s is %s: its edition's send does not change that", task.task_id, live.status)
            continue
        for name, value in fields.items():
            setattr(live, name, value)
        live.save()
        save_task(task)
        add_event(task, "edition_sent", "system", None, {"editionId": fresh.edition_id, "articleUrl": live.article_url})
        enqueue_live_outcome(task.task_id, live)
    edition_ended(settings.team, fresh, _titles(tasks))
    return True


def _failed(row: Edition, settings: Settings, code: str, detail: str | None = None) -> bool:
    if find_edition_rule(row.status, "failed") is None:
        return False
    with force_locale("en"):
        reason = edition_failure(code, detail)
    fresh = _cas(
        row,
        {
            "status": "failed",
            "fail_code": code,
            "fail_detail": detail,
            "fail_reason": reason,
            "next_at": None,
            "owner": None,
        },
    )
    if fresh is None:
        return False
    log.warning("edition %s failed: %s", fresh.edition_id, reason)
    tasks = _tasks(fresh)
    for task in tasks:
        data = {"editionId": fresh.edition_id, "failReason": reason, "failCode": code, "failDetail": detail}
        add_event(task, "edition_failed", "system", None, data)  # the code: the page words it (blueprints/pages.py)
    edition_ended(settings.team, fresh, _titles(tasks))
    return True


def _refine_failure(row: Edition, code: str, detail: str | None) -> bool:
    """mass/get says only SEND_FAIL: an edition a poll found failed takes the event's reason when it comes
    (nobody is told twice)."""
    with force_locale("en"):
        reason = edition_failure(code, detail)
    return _cas(row, {"fail_code": code, "fail_detail": detail, "fail_reason": reason}) is not None


def _number(event: ET.Element, name: str) -> int | None:
    """The element's whole number from 0 to COUNT_MAX, else None."""
    number = whole_number((event.findtext(name) or "").strip(), len(str(COUNT_MAX)))
    return number if number is not None and number <= COUNT_MAX else None


def mass_finished(account: str, event: ET.Element, settings: Settings) -> bool:
    """MASSSENDJOBFINISH for one of the account's editions still sending (inside the event's immediate());
    True when it changed something. A sent edition whose counts a poll could not give gets them now, a failed
    one its reason."""
    if (event.findtext("Event") or "").strip().upper() != "MASSSENDJOBFINISH":
        return False
    msg_id = (event.findtext("MsgID") or "").strip()
    row = Edition.get_or_none((Edition.account == account) & (Edition.msg_id == msg_id)) if msg_id else None
    if row is None:
        return _keep_early(account, msg_id, event)
    status = (event.findtext("Status") or "").strip().lower()
    said = status.replace(" ", "")  # captured events write "send success", the documents' example "sendsuccess"
    if said != "sendsuccess":
        code = said if said in EDITION_FAILURE_LABELS else "send_fail" if said == "sendfail" else "platform"
        detail = None if code != "platform" else status[:200]
        if row.status == "failed" and row.fail_code == "send_fail" and code != "send_fail":
            return _refine_failure(row, code, detail)
        return row.status == "sending" and _failed(row, settings, code, detail)
    counts = {key: _number(event, name) for key, name in _COUNTS.items()}
    urls: dict[int, str | None] = {}
    for item in event.findall("ArticleUrlResult/ResultList/item"):
        index, url = _number(item, "ArticleIdx"), (item.findtext("ArticleUrl") or "").strip()
        if index is not None:
            urls[index] = article_url(url)
            if url and urls[index] is None:
                log.warning("edition %s: the article address %.80r is not the platform's; not kept", msg_id, url)
    if row.status == "sending":
        return _sent(row, settings, counts, urls)
    if find_edition_rule(row.status, "counted") and row.counts is None:  # polled first: the event adds counts
        kept = [urls.get(index) for index in range(1, len(row.task_ids) + 1)]
        if _cas(row, {"counts": counts, "article_urls": kept}) is None:
            return False
        for index, task in enumerate(_tasks(row), 1):
            TaskLive.update(article_url=kept[index - 1], updated_at=now_iso()).where(
                (TaskLive.task == task) & (TaskLive.edition_id == row.edition_id)
            ).execute()
            save_task(task)
            # The poll's review_task.live carried no address: the agent hears it again, with it.
            if kept[index - 1] and (live := TaskLive.get_or_none(TaskLive.task == task)) is not None:
                enqueue_live_outcome(task.task_id, live)
        return True
    return False


def _keep_early(account: str, msg_id: str, event: ET.Element) -> bool:
    """An event for a send whose sendall answer is still to come (an edition of the account `sending` without
    a msg_id): kept for that answer, since mass/get never gives the counts and addresses. A day at most."""
    in_flight = (Edition.account == account) & (Edition.status == "sending") & Edition.msg_id.is_null()
    if not msg_id or len(msg_id) > 64 or not Edition.select().where(in_flight).exists():
        return False
    EarlyMassEvent.delete().where(EarlyMassEvent.received_at < iso(utcnow() - POLL_FOR)).execute()
    xml = ET.tostring(event, encoding="unicode")
    row = EarlyMassEvent.insert(account=account, msg_id=msg_id, xml=xml, received_at=now_iso())
    return bool(row.on_conflict_ignore().as_rowcount().execute())


def step(settings: Settings, until: float) -> None:
    """One pass, taking rows until time.monotonic() passes `until`; the write lock only when a plain read
    finds work."""
    now = now_iso()
    due = ((Edition.status == "scheduled") & (Edition.send_at <= now)) | (
        (Edition.status == "sending") & ((Edition.next_at <= now) | Edition.owner.is_null(False))
    )
    if not Edition.select().where(due).exists():
        return
    while time.monotonic() < until and (row := _claim_send(settings)) is not None:
        if row.status == "sending":
            send(row, settings)
    while time.monotonic() < until and (row := _claim_poll()) is not None:
        poll(row, settings)


def edition_job(settings: Settings) -> Job:
    """Editions (WECHAT_EDITIONS_ENABLED): a pass every second, and at once when sent now."""
    return job(JOB, lambda until: step(settings, until))
