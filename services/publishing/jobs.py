"""Publish jobs: claim (one IMMEDIATE transaction), the platform calls with no transaction open, then the
outcome (another). The job row says `failed` from the start (docs/decisions.md "Platform and publishing").
"""

import logging
import re
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import peewee

from models import immediate
from models.counters import count_event
from models.publishing import PublishLock
from models.review import PublishJob, ReviewTask, task_by_id
from rules.ids import iso, new_id, now_iso, utcnow
from rules.vocabulary import TRIGGER_MODES
from services.errors import Conflict, NotFound
from services.owners import gone, this_process
from services.platform.client import PlatformError, client_for
from services.publishing.image_uploads import JobImages, PublishFailed
from services.publishing.pipeline import build_article, refusal, save_draft
from services.publishing.snapshot import SnapshotError, build_snapshot
from services.rendering import ContentTooLarge
from services.review import add_event, apply_decision, fire, load_for_update, save_task, task_to_dict
from services.review.state_machine import find_rule, job_rule_for, rule_for
from services.review.webhooks import enqueue_publish_outcome
from services.settings import Settings
from services.settings.team import TeamSettings
from services.team.outbox import publish_ended

log = logging.getLogger(__name__)
TRIGGERS = {"manual": "publish", "auto_after_approval": "auto_publish"}  # state table rows
MIN_STALE_AFTER = timedelta(minutes=5)
MAX_ERROR_LENGTH = 500
INTERRUPTED = (
    "the service stopped during this publish, so whether the draft reached the platform is not "
    "known; retry it (a draft that did arrive is then created again)"
)
ABANDONED = (
    "this publish stopped giving signs of life (last at {heartbeat}; its process or container was "
    "probably stopped) and a new publish took the task over; whether its draft reached the platform "
    "is not known"
)


@dataclass
class Claim:
    task_pk: int
    account: str | None  # None: a claim ended at start, never run
    content_type: str | None
    job_id: str
    snapshot: dict | None
    draft_media_id: str | None  # of the task's last succeeded job: that draft is updated
    problem: str | None  # why the job fails before any platform call
    team: TeamSettings | None = None  # who hears of a failure (docs/api.md §15)


def publish_task(
    task_id: str, trigger_mode: str, actor_name: str | None, settings: Settings, if_match: str | None = None
) -> dict[str, Any]:
    """Publish the task's current selections as a new job; returns the updated task as JSON."""
    if trigger_mode not in TRIGGER_MODES:
        raise ValueError(f"trigger_mode must be one of {TRIGGER_MODES}")
    return publish_claimed(_claim(task_id, if_match, settings, trigger_mode), actor_name, settings)


def approve_and_publish(
    task_id: str, payload: dict[str, Any], actor_name: str | None, settings: Settings, if_match: str | None = None
) -> dict[str, Any]:
    """The approve_and_publish decision: the approval and its auto_after_approval job's claim commit
    together, so no other publish can come between them; the platform calls follow as usual."""
    return publish_claimed(approve_and_claim(task_id, payload, actor_name, settings, if_match), actor_name, settings)


def approve_and_claim(
    task_id: str, payload: dict[str, Any], actor_name: str | None, settings: Settings, if_match: str | None = None
) -> Any:
    """approve_and_publish's write alone (the approval and its job's claim); the caller runs
    publish_claimed after the commit, in the request or, from a chat card, in the background."""
    with immediate():
        apply_decision(task_id, payload, settings, actor_name=actor_name, if_match=if_match)
        return _claim(task_id, None, settings, "auto_after_approval")


def retry_job(
    task_id: str, job_id: str, actor_name: str | None, settings: Settings, if_match: str | None = None
) -> dict[str, Any]:
    """Publish the snapshot of failed job `job_id` again as a new manual job (attemptCount + 1)."""
    return publish_claimed(_claim(task_id, if_match, settings, "manual", source_job_id=job_id), actor_name, settings)


def stale_after(settings: Settings) -> timedelta:
    """A claim without a heartbeat for this long belongs to a process that died."""
    return max(MIN_STALE_AFTER, timedelta(seconds=10 * settings.wechat_timeout_seconds))


# ---- step 1 -----------------------------------------------------------------------------------
def _claim(task_id, if_match, settings, trigger_mode, source_job_id=None):
    with immediate():
        task = load_for_update(task_id, if_match)
        source = _source_job(task, source_job_id) if source_job_id else None
        if source is None:
            rule_for(task.status, TRIGGERS[trigger_mode])  # 409 unless the task is approved
        problem = None
        if source is not None:
            snapshot = source.snapshot
        else:
            overrides = settings.theme_overrides_for(task.public_account)
            try:
                snapshot = build_snapshot(task, overrides)
            except SnapshotError as exc:
                if trigger_mode == "manual":
                    raise Conflict(str(exc), {"status": [task.status]}, code="invalid_state") from None
                # The approval has committed already: the job records why it could not run.
                snapshot, problem = None, str(exc)
        job_id, now = new_id(), now_iso()
        _take_lock(task, job_id, now, stale_after(settings), settings.team)
        PublishJob.create(
            job_id=job_id,
            task=task,
            status="failed",
            trigger_mode=trigger_mode,
            attempt_count=source.attempt_count + 1 if source else 1,
            retry_of=source.job_id if source else None,
            queued_at=now,
            started_at=now,
            snapshot=snapshot,
            last_error=f"publish started at {now} has not finished: still running, or the service stopped "
            "during it (retry it if this stays)",
        )
        save_task(task)
        draft = last_draft_job(task)
        draft_id = draft.draft_media_id if draft else None
        return Claim(
            task.id, task.public_account, task.content_type, job_id, snapshot, draft_id, problem, settings.team
        )


def _source_job(task, job_id):
    job = PublishJob.get_or_none((PublishJob.job_id == job_id) & (PublishJob.task == task))
    if job is None:
        raise NotFound(f"task {task.task_id} has no publish job {job_id}")
    check_retry(task.status, job, job.snapshot is not None)
    return job


def check_retry(task_status: str | None, job: Any, snapshot_built: bool) -> None:
    """409 invalid_state unless a retry may start from `job` (a row, or anything with its job_id, status and
    finished_at): the job failed, it got as far as its snapshot, and the task is approved. The retry route
    refuses by it and the task page shows a Retry button by it, so the button never offers a 409."""
    job_rule_for(job, "retry")  # the job failed
    if not snapshot_built:
        raise Conflict(
            f"job {job.job_id} failed before its snapshot was built; publish the task again instead",
            {"jobId": [job.job_id]},
            code="invalid_state",
        )
    rule_for(task_status, "retry")  # the task is approved


def retryable_jobs(task: dict[str, Any]) -> frozenset[str]:
    """The ids of the jobs of `task` (as task_to_dict shows it) that check_retry lets retry now."""
    allowed = set()
    for job in task["publishJobs"]:
        row = SimpleNamespace(job_id=job["id"], status=job["status"], finished_at=job.get("finishedAt"))
        try:
            check_retry(task["status"], row, "snapshot" in job)
        except Conflict:
            continue
        allowed.add(job["id"])
    return frozenset(allowed)


def refuse_while_publishing(
    task: ReviewTask, stale_limit: timedelta, what: str = "a publish of this task is already running"
) -> PublishLock | None:
    """409 publish_in_progress while a live claim (heartbeat within `stale_limit`) holds the task.
    Returns the stale claim or None."""
    lock = PublishLock.get_or_none(PublishLock.task == task)
    if lock is not None and lock.heartbeat_at > iso(utcnow() - stale_limit):
        raise Conflict(
            f"{what} (job {lock.job_id}, started at {lock.created_at}); wait for it to finish and read the task again",
            {"jobId": [lock.job_id]},
            code="publish_in_progress",
        )
    return lock


def _take_lock(task, job_id, now, stale_limit, team):
    lock = refuse_while_publishing(task, stale_limit)
    if lock is not None:
        log.warning(
            "task %s: taking over the publish claim of job %s (no heartbeat since %s)",
            task.task_id,
            lock.job_id,
            lock.heartbeat_at,
        )
        _end_abandoned(task, lock, team)
        lock.delete_instance()
    PublishLock.create(task=task, job_id=job_id, created_at=now, heartbeat_at=now, owner=this_process())


def _end_abandoned(task, lock, team):
    """The job of a claim taken over is recorded as failed (it would read "still running" forever)."""
    job = PublishJob.get_or_none(PublishJob.job_id == lock.job_id)
    if job is None or job.finished_at:
        return
    job.status, job.finished_at = str(job_rule_for(job, "abandon").next_state), now_iso()
    job.last_error = one_line(ABANDONED.format(heartbeat=lock.heartbeat_at))
    job.save()
    add_event(task, "publish_failed", "system", None, {**_job_data(job), "lastError": job.last_error})
    _ended(task, job, team)


def _ended(task, job, team):
    """A job has its outcome: counted for /metrics (at the event, so deleting the task never lowers
    the count), reported to the agent and a failure to the team, in the transaction that records it."""
    count_event("review_publish_jobs", job.status, job.trigger_mode)
    enqueue_publish_outcome(task.task_id, job)
    publish_ended(team, task, job)


def _job_data(job):
    """What a job's publish_succeeded / publish_failed event names."""
    data = {"jobId": job.job_id, "triggerMode": job.trigger_mode, "attemptCount": job.attempt_count}
    if job.retry_of:
        data["retryOf"] = job.retry_of
    return data


def release_orphaned_claims(team: TeamSettings | None = None) -> None:
    """At start: the claims of a service process that stopped during a publish end now, their jobs
    recorded as failed, so the task can be published again at once (not after the stale limit)."""
    for lock in list(PublishLock.select()):
        if not gone(lock.owner, lock.created_at):
            continue
        log.warning("job %s: the service stopped during this publish; its claim is released", lock.job_id)
        claim = Claim(lock.task_id, None, None, lock.job_id, None, None, None, team)
        try:
            _finish(claim, None, None, INTERRUPTED, actor="system")
        except NotFound:
            PublishLock.delete().where(PublishLock.id == lock.id).execute()


def last_draft_job(task: ReviewTask) -> PublishJob | None:
    """The task's last succeeded job: its draft is the one a publish updates and a preview sends."""
    return (
        PublishJob.select()
        .where(
            (PublishJob.task == task) & (PublishJob.status == "succeeded") & PublishJob.draft_media_id.is_null(False)
        )
        .order_by(PublishJob.finished_at.desc(), PublishJob.id.desc())
        .first()
    )


# ---- step 2 -----------------------------------------------------------------------------------
def publish_claimed(claim: Any, actor_name: str | None, settings: Settings) -> dict[str, Any]:
    draft_media_id, error, sent_html = None, claim.problem, None
    if error is None:
        try:
            client = client_for(claim.account, settings)
            images = JobImages(
                client,
                uploads_root=settings.uploads_path,
                remote_hosts=settings.remote_image_hosts,
                allow_private=settings.remote_image_allow_private,
                timeout=settings.wechat_timeout_seconds,
                touch=lambda: _heartbeat(claim),
                concurrency=settings.wechat_upload_concurrency,
                progress=lambda done, total: _heartbeat(
                    claim, {"step": "uploading_images", "done": done, "total": total}
                ),
            )
            comments = claim.account not in settings.comments_closed
            article = build_article(images, claim.content_type, claim.snapshot, comments)
            if claim.content_type == "article":
                sent_html = article["content"]  # the body with the platform's image URLs
            _heartbeat(claim, {"step": "saving_draft"})
            draft_media_id = save_draft(images, article, claim.draft_media_id)
        except PlatformError as exc:
            error = refusal(exc, claim.account, claim.snapshot)
        except (PublishFailed, ContentTooLarge) as exc:
            error = str(exc)
        except Exception as exc:  # a bug must not leave the task claimed: record it, log the trace
            log.exception("publish job %s failed unexpectedly", claim.job_id)
            error = f"unexpected {type(exc).__name__} while publishing; the service log has the details"
    try:
        return _finish(claim, actor_name, draft_media_id, error, sent_html)
    except peewee.DatabaseError:
        # The platform has the draft but the job cannot say so: leave its id where an operator looks.
        log.error(
            "publish job %s of task %s: its outcome could not be stored (draft %s, error %s); the "
            "claim expires after %s",
            claim.job_id,
            claim.task_pk,
            draft_media_id,
            error,
            stale_after(settings),
        )
        raise


def _heartbeat(claim, progress=None):
    """Renews the claim; `progress` (the step the publish is at) is what the task page shows."""
    changes: dict[Any, Any] = {PublishLock.heartbeat_at: now_iso()}
    if progress is not None:
        changes[PublishLock.progress] = progress
    with immediate():
        PublishLock.update(changes).where(
            (PublishLock.task == claim.task_pk) & (PublishLock.job_id == claim.job_id)
        ).execute()


def publish_progress(task_id: str) -> dict[str, Any]:
    """What a running publish of the task is doing: {"running": false}, or its job, step and counts."""
    task = task_by_id(task_id)
    if task is None:
        raise NotFound(f"task {task_id} not found")
    lock = PublishLock.get_or_none(PublishLock.task == task.id)
    if lock is None:
        return {"running": False}
    return {
        "running": True,
        "jobId": lock.job_id,
        "startedAt": lock.created_at,
        **(lock.progress or {"step": "starting"}),
    }


def one_line(text: Any) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip() or "publish failed without a message"
    return text if len(text) <= MAX_ERROR_LENGTH else text[: MAX_ERROR_LENGTH - 1] + "…"


# ---- step 3 -----------------------------------------------------------------------------------
def _finish(claim, actor_name, draft_media_id, error, sent_html=None, actor="admin"):
    with immediate():
        task = ReviewTask.get_or_none(ReviewTask.id == claim.task_pk)
        job = PublishJob.get_or_none(PublishJob.job_id == claim.job_id)
        if task is None or job is None:
            raise NotFound("the task was deleted while it was being published")
        outcome = job_rule_for(job, "finish_succeeded" if error is None else "finish_failed")
        job.finished_at = now_iso()
        if sent_html is not None:  # the snapshot's bodyHtml becomes what the platform was sent (docs/api.md §5)
            job.snapshot = {**job.snapshot, "bodyHtml": sent_html}
        data = _job_data(job)
        job.status = str(outcome.next_state)
        if error is None:
            job.draft_media_id, job.last_error = draft_media_id, None
            trigger, data["draftMediaId"] = "publish_succeeded", draft_media_id
        else:
            job.last_error = one_line(error)
            trigger, data["lastError"] = "publish_failed", job.last_error
        job.save()
        _ended(task, job, claim.team)
        if find_rule(task.status, trigger):
            fire(task, trigger, actor, actor_name, {trigger: data})
        else:  # the claim was taken over meanwhile and the task moved on: only record what happened
            add_event(task, trigger, actor, actor_name, data)
        save_task(task)
        PublishLock.delete().where((PublishLock.task == task) & (PublishLock.job_id == job.job_id)).execute()
        view = task_to_dict(task)  # inside the write: no later request's events in this answer
    log.info(
        "task %s: publish job %s %s%s",
        task.task_id,
        job.job_id,
        job.status,
        f" ({job.last_error})" if job.last_error else "",
    )
    return view
