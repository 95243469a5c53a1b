"""Team notifications into the outbox (docs/api.md §15), one per configured channel, each written in the
transaction of what it reports, with the facts services/team/messages.py words when it is sent.
"""

from typing import Any

from models import OutboxMessage
from models.chat import ChatCard
from rules.ids import new_id, now_iso
from services.background import wake
from services.settings.team import TeamSettings

CARDS_JOB = "chat-cards"  # the scheduler's job that sends the decision cards (services/chat/worker.py)


def _account(team: TeamSettings | None, code: str) -> str:
    """The name people know the account by (docs/api.md §18)."""
    return team.account_name(code) if team is not None else code


def _enqueue(team: TeamSettings | None, event: str, subject_id: str, facts: dict[str, Any]) -> int:
    if team is None or event not in team.events or not team.channels:
        return 0
    now = now_iso()
    OutboxMessage.insert_many(
        [
            {
                "message_id": new_id("msg_"),
                "task_id": subject_id,
                "event_type": event,
                "channel": channel,
                "payload": {"event": event, **facts},
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for channel in team.channels
        ]
    ).execute()
    for channel in team.channels:  # its sender looks at once instead of at its next poll
        wake(f"team-{channel}")
    return len(team.channels)


def ask_in_chat(team: TeamSettings | None, task: Any, platforms: tuple[str, ...] | None = None) -> int:
    """A decision card per configured chat app for a task now waiting for review (docs/api.md §22)."""
    chosen = [p for p in (team.chat.platforms if team is not None else ()) if platforms is None or p in platforms]
    now = now_iso()
    for platform in chosen:
        ChatCard.create(
            task=task.id,
            platform=platform,
            state="to_send",
            version=0,
            next_attempt_at=now,
            created_at=now,
            updated_at=now,
        )
    if chosen:
        wake(CARDS_JOB)
    return len(chosen)


def task_awaiting_review(team: TeamSettings | None, task: Any, kind: str) -> int:
    """task.awaiting_review (`kind` "created" or "reworked"), and the chat apps' decision cards."""
    ask_in_chat(team, task)
    return _enqueue(
        team,
        "task.awaiting_review",
        task.task_id,
        {
            "kind": kind,
            "account": _account(team, task.public_account),
            "topic": task.topic,
            "path": f"/review/{task.task_id}",
        },
    )


def _task_event(team: TeamSettings | None, event: str, task: Any, **facts: Any) -> int:
    """A task's message: its account's name and topic first, the task page's path last."""
    about = {"account": _account(team, task.public_account), "topic": task.topic}
    return _enqueue(team, event, task.task_id, {**about, **facts, "path": f"/review/{task.task_id}"})


def publish_ended(team: TeamSettings | None, task: Any, job: Any) -> int:
    """task.publish_failed when a publish job ended failed; nothing for a success."""
    if job.status != "failed":
        return 0
    return _task_event(team, "task.publish_failed", task, error=job.last_error, jobId=job.job_id)


def live_ended(team: TeamSettings | None, task: Any, live: Any) -> int:
    """task.live or task.live_failed: the article reached readers, or could not (docs/api.md §18)."""
    return _task_event(
        team,
        "task.live" if live.status == "live" else "task.live_failed",
        task,
        articleUrl=live.article_url,
        error=live.fail_reason,
        reasonCode=live.fail_code,
        reasonDetail=live.fail_detail,
    )


def edition_ended(team: TeamSettings | None, edition: Any, titles: list[str]) -> int:
    """edition.sent or edition.failed: one message for the whole edition (docs/api.md §21)."""
    event = "edition.sent" if edition.status == "sent" else "edition.failed"
    return _enqueue(
        team,
        event,
        edition.edition_id,
        {
            "account": _account(team, edition.account),
            "topic": titles[0] if titles else "",
            "titles": titles,
            "counts": edition.counts,
            "error": edition.fail_reason,
            "reasonCode": edition.fail_code,
            "reasonDetail": edition.fail_detail,
            "path": f"/editions?account={edition.account}",
        },
    )


def feedback_received(team: TeamSettings | None, record: Any) -> int:
    """feedback.received: the app it came from stands where a task's account does."""
    return _enqueue(
        team,
        "feedback.received",
        record.feedback_id,
        {
            "account": record.app_name,
            "topic": record.title,
            "feedbackNo": record.feedback_no,
            "type": record.type,
            "path": f"/feedback/{record.feedback_id}",
        },
    )
