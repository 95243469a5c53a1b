"""Editions (docs/api.md §21): the day's articles an account sends to its followers as one message (群发).
Only rows are written here; the send itself is the worker's (services/editions/sending.py).
"""

from datetime import datetime
from typing import Any

from models import immediate
from models.editions import Edition
from models.review import ReviewTask
from rules.ids import iso, new_id, now_iso, parse_iso
from rules.labels import edition_failure
from services.background import wake
from services.editions import quota
from services.editions.checks import check_tasks
from services.editions.drafts import DraftGone, combined_draft
from services.editions.sending import JOB
from services.errors import Conflict, NotFound, PlatformRefused, ValidationFailed
from services.live.golive import when
from services.platform.client import PlatformError, client_for
from services.review.state_machine import edition_rule_for
from services.review.timeline import add_event
from services.settings import Settings


def edition_to_dict(edition: Edition) -> dict[str, Any]:
    urls = edition.article_urls or []
    return {
        "id": edition.edition_id,
        "account": edition.account,
        "status": edition.status,
        "taskIds": edition.task_ids,
        "sendAt": edition.send_at,
        "tagId": edition.tag_id,
        "ignoreReprint": edition.ignore_reprint,
        "draftMediaId": edition.draft_media_id,
        "msgId": edition.msg_id,
        "msgDataId": edition.msg_data_id,
        "counts": edition.counts,
        "failReason": edition.fail_reason,
        "articles": [
            {"taskId": task_id, "index": index, "articleUrl": urls[index - 1] if index <= len(urls) else None}
            for index, task_id in enumerate(edition.task_ids, 1)
        ],
        "createdBy": edition.created_by,
        "createdAt": edition.created_at,
        "updatedAt": edition.updated_at,
        "version": edition.version,
    }


def _row(edition_id: str, trigger: str | None = None) -> Edition:
    """The edition (404); with `trigger`, 409 invalid_state unless EDITION_TABLE allows it in its status."""
    edition = Edition.get_or_none(Edition.edition_id == edition_id)
    if edition is None:
        raise NotFound(f"no edition {edition_id}")
    if trigger is not None:
        edition_rule_for(edition.status, trigger)
    return edition


def _save(edition: Edition, **changes: Any) -> Edition:
    for name, value in changes.items():
        setattr(edition, name, value)
    edition.version += 1
    edition.updated_at = now_iso()
    edition.save()
    return edition


def propose(account: str, task_ids: list[str], actor_name: str | None, settings: Settings) -> dict[str, Any]:
    """A new `draft` edition of `task_ids` in order (201); the agent's proposal or an editor's."""
    if account not in settings.accounts:
        raise ValidationFailed(f"unknown account {account}", {"account": [f"one of {', '.join(settings.accounts)}"]})
    with immediate():
        check_tasks(account, task_ids)
        now = now_iso()
        edition = Edition.create(
            edition_id=new_id("ed_"),
            account=account,
            status="draft",
            task_ids=task_ids,
            created_by=actor_name,
            created_at=now,
            updated_at=now,
        )
        return edition_to_dict(edition)


def list_editions(account: str | None, status: str | None) -> list[dict[str, Any]]:
    query = Edition.select().order_by(Edition.id.desc())
    if account:
        query = query.where(Edition.account == account)
    if status:
        query = query.where(Edition.status == status)
    return [edition_to_dict(edition) for edition in query.limit(200)]


def get_edition(edition_id: str) -> dict[str, Any]:
    return edition_to_dict(_row(edition_id))


def reorder(edition_id: str, task_ids: list[str]) -> dict[str, Any]:
    """PATCH: another choice or order of tasks for a `draft` edition (the same rules as proposing)."""
    with immediate():
        edition = _row(edition_id, "reorder")
        check_tasks(edition.account, task_ids, besides=edition.id)
        return edition_to_dict(_save(edition, task_ids=task_ids, draft_media_id=None))


def delete_edition(edition_id: str) -> None:
    """A draft, canceled or failed edition goes; its tasks and the platform are untouched."""
    with immediate():
        edition = _row(edition_id, "delete")
        edition.delete_instance()


def schedule(
    edition_id: str,
    at: datetime | None,
    tag_id: int | None,
    ignore_reprint: bool,
    actor_name: str | None,
    settings: Settings,
) -> dict[str, Any]:
    """Send the edition now or at `at` (202, `scheduled`); 409 quota_exceeded past the quota (docs/api.md §21)."""
    moment = when(at)
    with immediate():
        edition = _row(edition_id, "send")
        check_tasks(edition.account, edition.task_ids, besides=edition.id)
        remaining, possible = quota.left(edition.account, moment, settings, besides=edition.id)
        if remaining < 1:
            limit, period = settings.mass_quota(edition.account)
            raise Conflict(
                f"{settings.accounts.get(edition.account, edition.account)} may mass send {limit} time(s) "
                f"a {period} and that is used up; the first possible send is at {iso(possible)}",
                {"quota": [f"{limit}/{period}"], "nextPossibleAt": [iso(possible)]},
                code="quota_exceeded",
            )
        _save(
            edition,
            status="scheduled",
            send_at=iso(moment),
            tag_id=tag_id,
            ignore_reprint=ignore_reprint,
            fail_reason=None,
        )
        for task in ReviewTask.select().where(ReviewTask.task_id.in_(edition.task_ids)):
            add_event(
                task, "edition_scheduled", "admin", actor_name, {"editionId": edition.edition_id, "at": edition.send_at}
            )
        wake(JOB)
        return edition_to_dict(edition)


def cancel(edition_id: str) -> dict[str, Any]:
    """A scheduled edition is canceled (409 once its send began)."""
    with immediate():
        edition = _row(edition_id, "cancel")
        return edition_to_dict(_save(edition, status="canceled"))


def preview(edition_id: str, wechat_id: str, settings: Settings) -> dict[str, Any]:
    """(Re)build the combined draft and send it to one WeChat user with message/mass/preview. The platform
    calls run with no transaction open; the draft is recorded only if the edition did not change meanwhile."""
    edition = _row(edition_id, "preview")
    _credentials(edition.account, settings)
    client = client_for(edition.account, settings)
    try:
        media_id = combined_draft(client, edition.task_ids)
        client.send_preview(media_id, wechat_name=wechat_id)
    except PlatformError as exc:
        raise exc.refused("the preview") from None
    except DraftGone as exc:
        raise Conflict(str(exc), {"taskIds": [exc.task_id]}, code="draft_gone") from None
    except LookupError as exc:
        raise Conflict(str(exc), {"taskIds": [str(exc)]}) from None
    with immediate():
        current = _row(edition_id)
        if current.version == edition.version:
            _save(current, draft_media_id=media_id)
        return edition_to_dict(current)


def release_task(task_id: str) -> None:
    """Before a task is deleted (inside its transaction): 409 while an edition holding it is scheduled or
    sending; a draft edition loses it (and goes when nothing is left)."""
    for edition in Edition.select().where(Edition.status.in_(("draft", "scheduled", "sending"))):
        if task_id not in edition.task_ids:
            continue
        if edition.status != "draft":
            raise Conflict(
                f"the task is in edition {edition.edition_id}, which is {edition.status}; cancel it first",
                {"editionId": [edition.edition_id]},
            )
        rest = [other for other in edition.task_ids if other != task_id]
        if rest:
            _save(edition, task_ids=rest, draft_media_id=None)
        else:
            edition.delete_instance()


def _credentials(account: str, settings: Settings) -> None:
    """409 before any call when the account cannot reach the platform (a setting, not the platform's refusal)."""
    if account not in settings.wechat_credentials:
        raise Conflict(
            f"account {account} has no platform credentials configured (WECHAT_<CODE>_APPID, _SECRET)",
            {"account": [account]},
        )


def follower_tags(account: str, settings: Settings) -> list[dict[str, Any]]:
    if account not in settings.accounts:
        raise ValidationFailed(f"unknown account {account}", {"account": ["unknown"]})
    _credentials(account, settings)
    try:
        tags = client_for(account, settings).follower_tags()
    except PlatformError as exc:
        raise exc.refused("tags/get") from None
    return [_tag(tag) for tag in tags]


# What a tag of tags/get holds (docs/api.md §21): anything else is the platform's 502 in words, not our 500.
_TAG_SHAPE = {
    "id": ("a whole number from 0 to 2147483647", lambda v: type(v) is int and 0 <= v <= 2**31 - 1),
    "name": ("a text", lambda v: isinstance(v, str)),
    "count": ("a whole number of followers", lambda v: type(v) is int and v >= 0),
}


def _tag(tag: dict[str, Any]) -> dict[str, Any]:
    for key, (expected, fits) in _TAG_SHAPE.items():
        value = tag.get(key)
        if not fits(value):
            shown = "missing" if key not in tag else "null" if value is None else repr(value)[:40]
            message = f"the platform's tags/get answered a tag whose {key} is {shown}, not {expected}"
            raise PlatformRefused(message, {"errcode": None, "errmsg": message})
    return {key: tag[key] for key in _TAG_SHAPE}


def quota_left(account: str, settings: Settings) -> dict[str, Any]:
    """For the page: sends left today (or this month) and the quota."""
    limit, period = settings.mass_quota(account)
    remaining, possible = quota.left(account, parse_iso(now_iso()), settings)
    return {
        "limit": limit,
        "period": period,
        "left": remaining,
        "nextPossibleAt": iso(possible),
        "protected": account in settings.mass_protected,
    }


# Failures that reached no follower (refused before sendall, by sendall, or by the platform's review: err(N)),
# so the articles may be sent again. The others (no answer, no result, "send fail", deleted after sending) may
# have reached some, and the page does not say they are free.
_NOTHING_SENT = ("tasks_changed", "draft", "platform", "not_sent", "errcode_", "err(")


def failure_words(edition_id: str) -> tuple[str | None, bool] | None:
    """(Why the edition failed, in the language in force (the page's); whether nothing was sent), or None
    unless it failed."""
    edition = _row(edition_id)
    if edition.status != "failed":
        return None
    words = edition_failure(edition.fail_code, edition.fail_detail) if edition.fail_code else edition.fail_reason
    return words, (edition.fail_code or "").startswith(_NOTHING_SENT)
