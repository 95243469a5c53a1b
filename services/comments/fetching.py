"""Fetching readers' comments (docs/api.md §23): each live article's comments listed page by page (at most 49
a call, until `total`), kept once per (account, msg_data_id, index, user_comment_id). One CommentFetch row per
article is claimed with a lease (services.background.claim), so of several processes one fetches it; the
platform is asked and what it said is compared with what is kept outside the write lock; inside it, one short
transaction only writes (docs/performance.md "Fetching readers' comments")."""

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from models import immediate
from models.base import insert_rows
from models.comments import CommentFetch, ReaderComment
from models.review import ReviewTask
from rules.ids import iso, new_id, now_iso, utcnow
from rules.vocabulary import COMMENTS_PAGE, comment_pages
from services.background import Job, claim, job, lease_of
from services.comments.articles import Article, live_articles
from services.comments.reading import pseudonym
from services.owners import orphaned, this_process
from services.platform.client import PlatformError, client_for
from services.review.webhooks import comments_message, enqueue_built
from services.settings import Settings

log = logging.getLogger(__name__)
JOB = "comments"
MAX_TEXT = 10_000  # characters of a comment or reply kept (the platform's are far shorter)


class UnreadableAnswer(ValueError):
    """A comment/list answer not of the platform's shape: the fetch fails with this reason."""


def _ensure_rows(articles: list[Article]) -> None:
    """A CommentFetch row for each article that has none yet, due now (one insert, none if all exist)."""
    if not articles:
        return
    known = {
        (row.account, row.msg_data_id, row.article_index)
        for row in CommentFetch.select(
            CommentFetch.account, CommentFetch.msg_data_id, CommentFetch.article_index
        ).where(CommentFetch.task.in_([article.task_pk for article in articles]))
    }
    missing = [a for a in articles if (a.account, a.msg_data_id, a.index) not in known]
    if not missing:
        return
    now = now_iso()
    rows = [
        {
            "task": a.task_pk,
            "account": a.account,
            "msg_data_id": a.msg_data_id,
            "article_index": a.index,
            "status": "idle",
            "next_at": now,
            "updated_at": now,
        }
        for a in missing
    ]
    with immediate():
        CommentFetch.insert_many(rows).on_conflict_ignore().execute()


def _time(value: Any) -> str:
    """create_time (unix seconds) as ISO UTC; anything else is an unreadable answer."""
    if type(value) is not int or not 0 <= value < 2**40:
        raise UnreadableAnswer("a comment's create_time is not a time")
    return iso(datetime.fromtimestamp(value, tz=UTC))


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise UnreadableAnswer(f"a comment's {what} is not text")
    return value[:MAX_TEXT]


def read_comment(item: Any, account: str, secret_key: str) -> dict[str, Any]:
    """One comment of a list answer as the row's fields (UnreadableAnswer when it is not the platform's shape)."""
    if not isinstance(item, dict):
        raise UnreadableAnswer("a comment is not an object")
    user_comment_id, openid = item.get("user_comment_id"), item.get("openid")
    if type(user_comment_id) is not int or not 0 <= user_comment_id < 2**63:
        raise UnreadableAnswer("a comment's user_comment_id is not a whole number")
    openid = _text(openid, "openid")[:128]
    reply = item.get("reply")
    fields: dict[str, Any] = {
        "user_comment_id": user_comment_id,
        "openid": openid,
        "reader": pseudonym(secret_key, account, openid),
        "content": _text(item.get("content"), "content"),
        "created_at": _time(item.get("create_time")),
        "featured": item.get("comment_type") == 1,
        "reply_content": None,
        "reply_created_at": None,
    }
    if isinstance(reply, dict) and reply.get("content"):
        fields["reply_content"] = _text(reply.get("content"), "reply")
        fields["reply_created_at"] = _time(reply.get("create_time")) if "create_time" in reply else None
    return fields


def list_all(client: Any, article: Article, limit: int, secret_key: str) -> tuple[dict[int, dict[str, Any]], bool]:
    """({user_comment_id: fields}, whether the list was read whole) of one article, in pages of COMMENTS_PAGE, at most
    `limit` comments (WECHAT_COMMENTS_MAX) in at most comment_pages(limit) calls. Whole only when every page gave one
    `total` and as many were found: a comment posted or deleted between two pages shifts the list, and what was
    skipped is not gone."""
    found: dict[int, dict[str, Any]] = {}
    begin, totals = 0, set()
    for _ in range(comment_pages(limit)):  # no more calls than the lease covers, however short the pages
        answer = client.list_comments(article.msg_data_id, article.index, begin, min(COMMENTS_PAGE, limit - len(found)))
        total, items = answer.get("total"), answer.get("comment", [])
        if type(total) is not int or total < 0 or not isinstance(items, list):
            raise UnreadableAnswer("its total or comment list is not of the platform's shape")
        totals.add(total)
        for item in items:
            fields = read_comment(item, article.account, secret_key)
            found[fields["user_comment_id"]] = fields
        begin += len(items)
        if begin >= total or not items:
            return found, len(totals) == 1 and len(found) == total
        if len(found) >= limit:
            return found, False
    return found, False


@dataclass
class Plan:
    """What one fetch writes, worked out before the write lock (docs/api.md §23): inside it only the writes."""

    fresh: list[dict[str, Any]] = field(default_factory=list)  # new comments' rows, already told
    changes: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (row id, changed columns)
    message: dict[str, Any] | None = None  # review_task.comments' outbox row for the fresh ones
    asked: str = ""  # when the platform was asked: a comment an editor acted on since keeps what they did


KEPT = ("content", "featured", "reply_content", "reply_created_at")  # what a fetch updates of a known comment


def plan(article: Article, task_id: str, found: dict[int, dict[str, Any]], complete: bool, asked: str) -> Plan:
    """The rows to insert and update, and the webhook of the new ones, read and built outside the lock: only a
    fetch holding the article's claim adds its comments (checked again inside the lock by _finish, and by the
    unique index), so what is known here stays known. Linear in the list."""
    now = now_iso()
    columns = (ReaderComment.id, ReaderComment.user_comment_id, ReaderComment.removed) + tuple(
        getattr(ReaderComment, name) for name in KEPT
    )
    rows: Any = ReaderComment.select(*columns).where(
        (ReaderComment.account == article.account)
        & (ReaderComment.msg_data_id == article.msg_data_id)
        & (ReaderComment.article_index == article.index)
    )
    known: dict[int, tuple[Any, ...]] = {values[1]: values for values in rows.tuples()}
    result = Plan(asked=asked)
    for key, fields in found.items():
        if key not in known:
            row = {
                **fields,
                "comment_id": new_id("cm_"),
                "task": article.task_pk,
                "account": article.account,
                "msg_data_id": article.msg_data_id,
                "article_index": article.index,
                "removed": False,
                "announced": True,  # told by `message`, written in the same transaction
                "reply_by": None,
                "fetched_at": now,
            }
            result.fresh.append(row)
    for key, (row_id, _, removed, *values) in known.items():
        if key not in found:
            if complete and not removed:
                result.changes.append((row_id, {"removed": True, "fetched_at": now}))
            continue
        fields = found[key]
        changes = {name: fields[name] for name, value in zip(KEPT, values, strict=True) if value != fields[name]}
        if "reply_content" in changes and _same_text(values[KEPT.index("reply_content")], fields["reply_content"]):
            del changes["reply_content"]  # the platform's copy of the editor's reply, its ends trimmed
        if removed:
            changes["removed"] = False
        if "reply_content" in changes:  # gone, or written anew in WeChat's back office: no editor's here
            changes["reply_by"] = None
        if changes:
            result.changes.append((row_id, {**changes, "fetched_at": now}))
    if result.fresh:
        told = sorted(result.fresh, key=lambda row: (row["created_at"], row["user_comment_id"]))
        result.message = comments_message(task_id, told)
    return result


def _same_text(kept: str | None, found: str | None) -> bool:
    return kept is not None and found is not None and kept.strip() == found.strip()


def store(writes: Plan) -> int:
    """Write one article's comments (inside immediate()): the new ones in one insert with their webhook, the
    changed ones updated, ones gone from a whole list marked removed, except those an editor acted on since the
    platform was asked (its answer predates the action). Each comment is told once."""
    insert_rows(ReaderComment, writes.fresh)
    untouched = ReaderComment.acted_at.is_null() | (ReaderComment.acted_at < writes.asked)
    for row_id, changes in writes.changes:
        ReaderComment.update(**changes).where((ReaderComment.id == row_id) & untouched).execute()
    if writes.message is not None:
        enqueue_built(writes.message)
    return len(writes.fresh)


def _finish(row: CommentFetch, settings: Settings, error: str | None) -> bool:
    """End the claimed fetch (inside immediate()) if it is still this call's claim; whether it was."""
    now = utcnow()
    changes: dict[Any, Any] = {
        "status": "idle",
        "owner": None,
        "lease_until": None,
        "next_at": iso(now + timedelta(minutes=settings.comments_minutes)),
        "last_error": error,
        "updated_at": iso(now),
    }
    if error is None:
        changes["last_fetched_at"] = iso(now)
    still = (
        (CommentFetch.id == row.id)
        & (CommentFetch.status == "running")
        & (CommentFetch.owner == row.owner)
        & (CommentFetch.lease_until == row.lease_until)
    )
    ours = CommentFetch.update(changes).where(still).execute() == 1
    if not ours:
        log.warning(
            "comments of %s/%s: the fetch was taken over meanwhile; this result was dropped",
            row.account,
            row.msg_data_id,
        )
    return ours


def fetch_article(row: CommentFetch, settings: Settings) -> dict[str, Any]:
    """One claimed article's fetch: {"account", "taskPk", "stored", "error", "calls"}. Whatever goes wrong ends
    the row idle with its reason, never running."""
    article = Article(row.task_id, row.account, row.msg_data_id, row.article_index)
    error, stored, asked = None, 0, now_iso()
    try:
        client = client_for(row.account, settings)
        found, complete = list_all(client, article, settings.comments_max, settings.secret_key)
    except PlatformError as exc:
        error = str(exc)
    except UnreadableAnswer as exc:
        error = f"the platform's answer could not be read: {exc}"
    except Exception as exc:  # the row must not stay running, and its page says why
        log.exception("comments of %s/%s could not be fetched", row.account, row.msg_data_id)
        error = f"the fetch failed by an unexpected {type(exc).__name__} (see the service's log)"
    if error is None:
        try:
            writes = plan(article, ReviewTask.get_by_id(row.task_id).task_id, found, complete, asked)
            with immediate():
                if _finish(row, settings, None):  # the claim first: a fetch taken over stores nothing
                    stored = store(writes)
        except Exception as exc:  # a store that failed: the row must not stay running
            log.exception("comments of %s/%s could not be stored", row.account, row.msg_data_id)
            error = f"the comments could not be stored ({type(exc).__name__})"
    if error is not None:
        log.warning("comments of %s/%s_%s: %s", row.account, row.msg_data_id, row.article_index, error)
        with immediate():
            _finish(row, settings, error)
    return {"account": row.account, "taskPk": row.task_id, "stored": stored, "error": error}


def fetch(settings: Settings, account: str | None = None, until: float = math.inf, force: bool = False) -> dict:
    """One pass over the live articles (of `account`, or all): each due article claimed and fetched once;
    `force` (the command) takes those not due yet too, never one another process is fetching. One account's
    failure never stops another's. {"articles", "stored", "failed": [{"account", "error"}]}."""
    articles = live_articles(settings, account)
    _ensure_rows(articles)
    tasks = [article.task_pk for article in articles]
    summary: dict[str, Any] = {"articles": 0, "stored": 0, "failed": []}
    done: list[int] = []
    while tasks and time.monotonic() < until:
        now = now_iso()
        stopped = orphaned(CommentFetch, CommentFetch.status == "running", CommentFetch.lease_until)
        free = (CommentFetch.status == "idle") | (CommentFetch.lease_until < now) | stopped
        due = CommentFetch.task.in_(tasks) & free & CommentFetch.id.not_in(done or [0])
        if not force:
            due &= CommentFetch.next_at <= now
        lease = iso(utcnow() + lease_of("comments", settings))  # a fetch whose process stopped: taken again then
        row = claim(
            CommentFetch,
            due,
            (CommentFetch.next_at, CommentFetch.id),
            {"status": "running", "owner": this_process(), "lease_until": lease, "updated_at": now},
        )
        if row is None:
            break
        done.append(row.id)
        try:
            result = fetch_article(row, settings)
        except Exception:  # one article's trouble never stops the others
            log.exception("comments of %s/%s: the fetch stopped", row.account, row.msg_data_id)
            result = {"account": row.account, "stored": 0, "error": "the fetch stopped"}
        summary["articles"] += 1
        summary["stored"] += result["stored"]
        if result["error"]:
            summary["failed"].append({"account": result["account"], "error": result["error"]})
    return summary


def comments_job(settings: Settings) -> Job:
    """Readers' comments (WECHAT_COMMENTS_ENABLED): a look at start, then once a minute."""
    return job(JOB, lambda until: fetch(settings, until=until), every=settings.comments_minutes * 60.0)
