"""Decisions as data (docs/api.md §20): every decided task as one `raw` record; dataset_formats.py turns
each into the lines of `sft`, `dpo` or `kto`. Tasks are keyset-paged in the order of their last decision
(`decided_at`, then id), then read whole, readers' comments included, a few at a time, each few in one short
read transaction.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from peewee import fn

from models import db
from models.comments import CommentProposal, ReaderComment
from models.live import TaskLive
from models.review import ReviewTask, TimelineEvent
from models.stats import TaskDayStats
from rules.ids import now_iso
from rules.vocabulary import DATASET_FORMATS
from schemas.dump import dumper
from schemas.review.live import LiveSchema
from services.errors import ValidationFailed
from services.export.dataset_formats import FORMATTERS
from services.review.queries import parse_bound
from services.stats.reading import day_dict, totals

FORMATS = DATASET_FORMATS
DECIDED = {"approved": "approved", "published": "approved", "rejected_rework": "rejected"}  # status -> decision
PAGE = 100  # tasks whose order is read at a time (their id, moment, status and account)
FULL_ROWS = 10  # whole tasks read at a time, with their events, going live, days and comments
FULL_CHARS = 128 * 1024  # ... and at most this many stored characters of them, comments included (a bigger
# task is read alone)
CHUNK_CHARS = 64 * 1024  # lines are sent in chunks of about this size
_EVENTS = ("rejected", "rework_submitted", "approved")
_dump_live = dumper(LiveSchema)
# A task's stored size in characters, its large JSON columns (docs/performance.md "The dataset export").
_SIZE = (
    fn.COALESCE(fn.LENGTH(ReviewTask.candidates), 0)
    + fn.COALESCE(fn.LENGTH(ReviewTask.selections), 0)
    + fn.COALESCE(fn.LENGTH(ReviewTask.body_draft), 0)
    + fn.COALESCE(fn.LENGTH(ReviewTask.manual_overrides), 0)
)
# ... and of its readers' comments with their replies and proposals.
_COMMENT_SIZE = fn.LENGTH(ReaderComment.content) + fn.COALESCE(fn.LENGTH(ReaderComment.reply_content), 0)


@dataclass(frozen=True)
class DatasetQuery:
    """What to export: `start` inclusive, `end` exclusive (ISO bounds on the decision's moment)."""

    format: str
    start: str | None = None
    end: str | None = None
    account: str | None = None
    limit: int | None = None


def dataset_query(
    format: str | None,
    from_: str | None = None,
    to: str | None = None,
    account: str | None = None,
    limit: int | None = None,
) -> DatasetQuery:
    """The export's filters checked (400 naming `format`, `from` or `to`); a date-only `to` covers its day."""
    if format not in FORMATS:
        raise ValidationFailed(
            f"format must be one of {', '.join(FORMATS)}", {"format": [f"must be one of: {', '.join(FORMATS)}"]}
        )
    start, end = parse_bound(from_, "from", end=False), parse_bound(to, "to", end=True)
    if start and end and start >= end:
        raise ValidationFailed("from must be earlier than or equal to to", {"from": ["is after to"]})
    return DatasetQuery(format, start, end, account, limit)


def _lines(query: DatasetQuery) -> Iterator[Iterator[str]]:
    """Each line of the export as its pieces, oldest decision first (at most query.limit)."""
    shape = FORMATTERS.get(query.format)
    count = 0
    for record in raw_records(query):
        for line in [record] if shape is None else shape(record):
            yield json_pieces(line)
            count += 1
            if query.limit is not None and count >= query.limit:
                return


def dataset_lines(query: DatasetQuery) -> Iterator[str]:
    """Each line of the export, with its newline, oldest decision first (at most query.limit)."""
    for pieces in _lines(query):
        yield "".join(pieces)


# Characters that end a line for a reader splitting the Unicode way (str.splitlines) but that json.dumps
# writes as they are: escaped, so each record stays one line (docs/api.md §20). Only strings hold them.
_LINE_ENDS = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\u0085"))


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for end, escaped in _LINE_ENDS:
        if end in text:  # rare: a scan, not a copy
            text = text.replace(end, escaped)
    return text


def json_pieces(value: Any) -> Iterator[str]:
    """`value` as one JSON Lines line, newline included, in pieces: an object's members one by one, so the
    line of a task of hundreds of KB is not built, nor copied on its way out, as one string."""
    if not isinstance(value, dict) or not value:
        yield _json(value) + "\n"
        return
    opening = "{"
    for key, member in value.items():
        yield f"{opening}{_json(str(key))}:{_json(member)}"
        opening = ","
    yield "}\n"


def dataset_chunks(query: DatasetQuery) -> Iterator[str]:
    """The lines' pieces joined into chunks of about CHUNK_CHARS (fewer, larger writes to the client); a
    piece larger than that goes alone."""
    pending: list[str] = []
    size = 0
    for pieces in _lines(query):
        for piece in pieces:
            if size and size + len(piece) > CHUNK_CHARS:
                yield "".join(pending)
                pending, size = [], 0
            pending.append(piece)
            size += len(piece)
    if pending:
        yield "".join(pending)


def raw_records(query: DatasetQuery, page: int = PAGE) -> Iterator[dict[str, Any]]:
    """One `raw` record per decided task, oldest decision first."""
    # Only the moment of the decision narrows the SQL, so the page walks the decided_at index (another
    # condition would let the database sort every match for each page); other tasks are skipped here.
    # Those decided once the export has begun are the next export's.
    conditions = [ReviewTask.decided_at.is_null(False), ReviewTask.decided_at <= now_iso()]
    if query.start:
        conditions.append(ReviewTask.decided_at >= query.start)
    if query.end:
        conditions.append(ReviewTask.decided_at < query.end)
    after: tuple[str | None, int] | None = None
    while True:
        where = list(conditions)
        if after is not None:
            where += [
                ReviewTask.decided_at >= after[0],
                (ReviewTask.decided_at > after[0]) | (ReviewTask.id > after[1]),
            ]
        keys = list(
            ReviewTask.select(
                ReviewTask.id, ReviewTask.decided_at, ReviewTask.status, ReviewTask.public_account, _SIZE.alias("size")
            )
            .where(*where)
            .order_by(ReviewTask.decided_at, ReviewTask.id)
            .limit(page)
        )
        wanted = {
            key.id: (key.decided_at, getattr(key, "size", 0) or 0)  # the _SIZE column
            for key in keys
            if key.status in DECIDED and query.account in (None, key.public_account)
        }
        yield from _records(_with_comment_sizes(wanted))
        if len(keys) < page:
            return
        after = (keys[-1].decided_at, keys[-1].id)


def _with_comment_sizes(wanted: dict[int, tuple[str | None, int]]) -> dict[int, tuple[str | None, int]]:
    """`wanted` with each task's size grown by its comments' (two grouped queries for the page), so a task
    with many comments is read with fewer others, or alone (docs/performance.md "The dataset export")."""
    if not wanted:
        return wanted
    sizes = dict.fromkeys(wanted, 0)
    pks = list(wanted)
    for own in (
        ReaderComment.select(ReaderComment.task, fn.SUM(_COMMENT_SIZE).alias("chars"))
        .where(ReaderComment.task.in_(pks))
        .group_by(ReaderComment.task),
        ReaderComment.select(ReaderComment.task, fn.SUM(fn.LENGTH(CommentProposal.content)).alias("chars"))
        .join(CommentProposal)
        .where(ReaderComment.task.in_(pks))
        .group_by(ReaderComment.task),
    ):
        for row in own:
            sizes[row.task_id] += int(getattr(row, "chars", 0) or 0)  # the SUM column
    return {pk: (moment, size + sizes[pk]) for pk, (moment, size) in wanted.items()}


def _batches(wanted: dict[int, tuple[str | None, int]]) -> Iterator[list[int]]:
    """The ids of `wanted` in order, in reads of at most FULL_ROWS tasks and FULL_CHARS stored characters (a
    task larger than that alone): ten small tasks at a time, one or two of the sizes teams meet."""
    batch: list[int] = []
    size = 0
    for pk, (_, chars) in wanted.items():
        if batch and (len(batch) == FULL_ROWS or size + chars > FULL_CHARS):
            yield batch
            batch, size = [], 0
        batch.append(pk)
        size += chars
    if batch:
        yield batch


def _records(wanted: dict[int, tuple[str | None, int]]) -> Iterator[dict[str, Any]]:
    """The records of the tasks `wanted` ({pk: (decided_at as paged, stored size)}), in that order, read whole
    a few at a time (_batches): a whole task (its candidates may be 2 MiB, its comments many) is the big part
    of the page."""
    for ids in _batches(wanted):
        with db.atomic():  # a task and its parts agree; no transaction is held while the lines are written
            tasks = [
                task
                for task in ReviewTask.select()
                .where(ReviewTask.id.in_(ids))
                .order_by(ReviewTask.decided_at, ReviewTask.id)
                if task.status in DECIDED and task.decided_at == wanted[task.id][0]
            ]  # not decided again since
            parts = _parts(tasks)
        while tasks:  # each record let go once written: a batch of big tasks is not held to its end
            task = tasks.pop(0)
            yield record(task, *(part.pop(task.id, None) for part in parts))


def _parts(tasks: list[ReviewTask]) -> tuple[dict, dict, dict, dict]:
    """({pk: decision events in order}, {pk: TaskLive}, {pk: readers' days ascending}, {pk: readers'
    comments oldest first}) in five queries."""
    pks = [task.id for task in tasks]
    events: dict[int, list] = {}
    days: dict[int, list] = {}
    if not pks:
        return events, {}, days, {}
    for event in (
        TimelineEvent.select(TimelineEvent.task, TimelineEvent.type, TimelineEvent.data)
        .where(TimelineEvent.task.in_(pks) & TimelineEvent.type.in_(_EVENTS))
        .order_by(TimelineEvent.id)
    ):
        events.setdefault(event.task_id, []).append(event)
    lives = {live.task_id: live for live in TaskLive.select().where(TaskLive.task.in_(pks))}
    for row in TaskDayStats.select().where(TaskDayStats.task.in_(pks)).order_by(TaskDayStats.task, TaskDayStats.day):
        days.setdefault(row.task_id, []).append(day_dict(row))
    return events, lives, days, _comments(pks)


def _comments(pks: list[int]) -> dict[int, list[dict[str, Any]]]:
    """{pk: the record's `comments`}: each comment's text, the agent's proposals (oldest first, with their
    state) and the reply's text; no reader is named, not even by pseudonym (docs/api.md §20 `raw`)."""
    rows = list(
        ReaderComment.select(ReaderComment.id, ReaderComment.task, ReaderComment.content, ReaderComment.reply_content)
        .where(ReaderComment.task.in_(pks))
        .order_by(ReaderComment.task, ReaderComment.created_at, ReaderComment.user_comment_id)
    )
    proposals: dict[int, list[dict[str, Any]]] = {row.id: [] for row in rows}
    if rows:
        for proposal in (
            CommentProposal.select(CommentProposal.comment, CommentProposal.content, CommentProposal.state)
            .join(ReaderComment)
            .where(ReaderComment.task.in_(pks))
            .order_by(CommentProposal.created_at, CommentProposal.id)
        ):
            proposals[proposal.comment_id].append({"content": proposal.content, "state": proposal.state})
    comments: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        entry = {"content": row.content, "proposals": proposals.pop(row.id), "reply": row.reply_content}
        comments.setdefault(row.task_id, []).append(entry)
    return comments


# ---- one task's record ---------------------------------------------------------------------------


def record(
    task: ReviewTask, events: list | None, live: TaskLive | None, days: list | None, comments: list | None
) -> dict[str, Any]:
    """The `raw` line of a decided task (docs/api.md §20)."""
    decision = DECIDED[task.status]
    held = held_values(task)
    chosen = chosen_values(task, held)
    days = days or []
    went_live = live is not None and live.status == "live"
    return {
        "taskId": task.task_id,
        "account": task.public_account,
        "kind": task.content_type,
        "context": task.context,
        "decision": decision,
        "decidedAt": task.decided_at,
        "candidates": task.candidates,
        "chosen": chosen,
        "final": held if decision == "approved" else None,
        "edits": {key: {"chosen": chosen[key], "final": value} for key, value in held.items() if chosen[key] != value},
        "rework": rework(events or [], held, open_round=decision == "rejected"),
        "live": _dump_live(live) if live is not None else None,
        "readers": {"totals": totals(days), "days": days} if went_live or days else None,
        "comments": comments or [],
    }


def held_values(task: ReviewTask) -> dict[str, Any]:
    """The task's selections, its body as the body draft holds it (what is published)."""
    held = dict(task.selections or {})
    markdown = (task.body_draft or {}).get("markdown")
    if "body" in held and markdown is not None:
        held["body"] = markdown
    return held


def chosen_values(task: ReviewTask, held: dict[str, Any]) -> dict[str, Any]:
    """Per field, what the editor picked before editing: an override's starting point (a body override's
    source option), else the value held (taken as it was)."""
    overrides = task.manual_overrides or {}
    options = {option["id"]: option["content"] for option in (task.candidates or {}).get("bodyOptions") or []}
    chosen = {}
    for key, value in held.items():
        override = overrides.get(key)
        if override is None:
            chosen[key] = value
        elif key == "body":
            chosen[key] = options.get(override.get("basedOnCandidateId"), value)
        else:
            chosen[key] = override.get("basedOn") if override.get("basedOn") is not None else value
    return chosen


def rework(events: list, held: dict[str, Any], *, open_round: bool) -> list[dict[str, Any]]:
    """The record's `rework`: [{"field", "reason": {"category", "note"}, "before", "after"}] of every
    rejection, in order (docs/api.md §20); while open, a whole-task rejection names each field held."""
    rounds: list[dict[str, Any]] = []
    for event in events:
        data = event.data or {}
        if event.type == "rejected":
            rounds.append(
                {
                    "fields": list(data.get("rejectedElements") or []),
                    "changes": {},
                    "reason": {"category": data.get("rejectionReason"), "note": data.get("rejectionNote")},
                }
            )
        elif event.type == "rework_submitted" and rounds:
            changes = rounds[-1]["changes"]
            for key, change in (data.get("changes") or {}).items():
                first = changes.get(key, change)
                changes[key] = {"before": first.get("before"), "after": change.get("after")}
    entries = []
    for number, found in enumerate(rounds):
        still_open = open_round and number == len(rounds) - 1
        fields = found["fields"] or list(found["changes"])
        if still_open and not found["fields"]:
            fields += [key for key in held if key not in fields]
        for key in fields:
            change = found["changes"].get(key)
            if change is not None:
                before, after = change["before"], change["after"]
            else:  # not patched yet (open round), or patched with the value it had
                before, after = (held.get(key), None) if still_open else (None, None)
            entries.append({"field": key, "reason": found["reason"], "before": before, "after": after})
        if not fields:
            entries.append({"field": None, "reason": found["reason"], "before": None, "after": None})
    return entries
