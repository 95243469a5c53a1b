"""Task creation by the agent, with Idempotency-Key replay (docs/api.md §4 "Identity and shape").

The payload arrives loaded by schemas.review.CreateTaskSchema; this module adds the database rules and writes
task, first event and idempotency record in one IMMEDIATE transaction, so one key cannot create two tasks.
"""

import hashlib
import json
from datetime import timedelta
from typing import Any

import peewee

from models import immediate
from models.review import IdempotencyKey, ReviewTask
from rules.client_input import url_parts
from rules.ids import iso, new_id, now_iso, utcnow
from rules.limits import IDEMPOTENCY_HOURS, IDEMPOTENCY_KEY_MAX
from services.asset_refs import resolve_many
from services.errors import Conflict, ValidationFailed
from services.rendering import image_urls
from services.review.serialize import task_to_dict
from services.review.state_machine import rule_for
from services.review.timeline import add_event
from services.review.validation import Problems
from services.settings.team import TeamSettings
from services.team.outbox import task_awaiting_review

IDEMPOTENCY_TTL = timedelta(hours=IDEMPOTENCY_HOURS)


def body_hash(payload: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the loaded payload (key order and spacing do not matter)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_key(key: str | None) -> None:
    if key is not None and not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX:
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} characters",
            {"Idempotency-Key": [f"length {len(key)}"]},
        )
    if key is not None and not key.isprintable():  # a NUL cannot be stored on PostgreSQL (it was a 500)
        raise ValidationFailed(
            "Idempotency-Key must not hold control characters", {"Idempotency-Key": ["control characters"]}
        )


def _candidate_images(candidates):
    """(refs, paths) to look up: image-group assets, and candidate image URLs that are no web address
    (docs/api.md §4's creation rule 4). Read from the payload alone, before the write lock (a body option may
    hold megabytes)."""
    refs, paths = [], []
    for g_index, group in enumerate(candidates.get("imageGroups") or []):
        for i_index, image in enumerate(group["images"]):
            refs.append(image)
            paths.append(f"candidates.imageGroups.{g_index}.images.{i_index}.assetId")
    urls = [(f"candidates.coverImages.{index}", url) for index, url in enumerate(candidates.get("coverImages") or [])]
    for p_index, placeholder in enumerate(candidates.get("bodyImageCandidates") or []):
        urls += [
            (f"candidates.bodyImageCandidates.{p_index}.options.{index}", url)
            for index, url in enumerate(placeholder["options"])
        ]
    for o_index, option in enumerate(candidates.get("bodyOptions") or []):
        if "![" in option["content"]:  # no image without it: most bodies skip the parse
            urls += [(f"candidates.bodyOptions.{o_index}.content", url) for url in image_urls(option["content"])]
    local = [(path, url) for path, url in urls if not _web_address(url)]
    return refs + [url for _, url in local], paths + [path for path, _ in local]


def _check_candidate_images(refs, paths):
    """Each of _candidate_images() is an existing asset."""
    problems = Problems()
    for index, asset in resolve_many(refs).items():
        if asset is not None:
            continue
        if isinstance(refs[index], dict):
            problems.add(
                paths[index],
                f"no asset with id {refs[index]['assetId']!r}; upload the image with "
                "POST /api/assets/upload and use the assetId it returns",
            )
        else:
            problems.add(
                paths[index],
                f"{refs[index]!r} is neither an uploaded image nor a web address; upload it with "
                "POST /api/assets/upload first and use the url it returns",
            )
    problems.raise_if_any("candidate images must be uploaded assets (or web addresses)")


def _web_address(url):
    """http(s)://host/… or //host/…"""
    parts = url_parts(url)
    return parts is not None and parts.scheme in ("http", "https", "") and bool(parts.netloc)


def _replay(key, digest):
    """(status, body) of an earlier creation with this key, None when there is none (or it expired)."""
    record = IdempotencyKey.get_or_none(IdempotencyKey.key == key)
    if record is None:
        return None
    if record.created_at < iso(utcnow() - IDEMPOTENCY_TTL):
        record.delete_instance()
        return None
    if record.body_hash != digest:
        raise Conflict(
            "this Idempotency-Key was already used with a different body; use a new key",
            {"Idempotency-Key": ["used with a different body"]},
            code="idempotency_conflict",
        )
    return record.status, record.response


def _context(given):
    """{"prompt", "model"} as stored (each None when not sent), or None when the agent said nothing."""
    context = {"prompt": (given or {}).get("prompt"), "model": (given or {}).get("model")}
    return context if any(value is not None for value in context.values()) else None


def _insert(payload, team):
    """The new task, its first events and the team's notice; returns the task's JSON."""
    now = now_iso()
    rule = rule_for(None, "create")
    task = ReviewTask.create(
        task_id=new_id(),
        public_account=payload["publicAccount"],
        content_type=payload["contentType"],
        topic=payload["topic"],
        external_content_id=payload.get("externalContentId"),
        status=rule.next_state,
        candidates=payload["candidates"],
        context=_context(payload.get("context")),
        version=1,
        created_at=now,
        updated_at=now,
    )
    events = [
        add_event(task, event, "agent", None, {"contentType": task.content_type, "publicAccount": task.public_account})
        for event in rule.events
    ]
    task_awaiting_review(team, task, "created")
    return task_to_dict(task, events=events, jobs=[])  # all of it is at hand: no reading back


def create_task(
    payload: dict[str, Any], idempotency_key: str | None = None, team: TeamSettings | None = None
) -> tuple[int, dict[str, Any], bool]:
    """(status, task JSON, replayed). 201 for a new task; a replay returns the first answer. `team`
    (Settings.team) hears of a new task, in the same transaction (docs/api.md §15)."""
    check_key(idempotency_key)
    digest = body_hash(payload) if idempotency_key is not None else None
    images = _candidate_images(payload["candidates"])
    for _attempt in range(2):
        try:
            with immediate():
                if idempotency_key is not None:
                    purge_expired_keys()
                    earlier = _replay(idempotency_key, digest)
                    if earlier is not None:
                        return earlier[0], earlier[1], True
                _check_candidate_images(*images)
                body = _insert(payload, team)
                if idempotency_key is not None:
                    IdempotencyKey.create(
                        key=idempotency_key, body_hash=digest, status=201, response=body, created_at=body["createdAt"]
                    )
                return 201, body, False
        except peewee.IntegrityError:
            # Another server process stored the key first (databases without IMMEDIATE): replay it.
            if idempotency_key is None:
                raise
    raise Conflict(
        "the Idempotency-Key is in use by a request still running; retry shortly", code="idempotency_conflict"
    )


def purge_expired_keys() -> int:
    """Remove idempotency records older than IDEMPOTENCY_TTL; returns how many."""
    return IdempotencyKey.delete().where(IdempotencyKey.created_at < iso(utcnow() - IDEMPOTENCY_TTL)).execute()
