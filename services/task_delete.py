"""Deleting a review task, then its files best-effort: the rules are docs/api.md §8, the details
docs/package-and-delete.md "Delete". After the task's transaction commits the deletion stands, whatever
happens to the files.
"""

import logging
import os
from pathlib import Path
from typing import Any

import peewee

from models import Asset, immediate
from models.files import AssetCleanup
from models.review import IdempotencyKey, PublishJob, ReviewTask, TimelineEvent
from rules.ids import now_iso
from services.asset_refs import ref_key, resolve_many, task_references
from services.assets import STORED_NAME
from services.editions import release_task
from services.files import removed_file, settle_removals
from services.publishing.jobs import refuse_while_publishing, stale_after
from services.review.concurrency import load_for_update
from services.review.presence import forget_task
from services.review.state_machine import rule_for
from services.review.webhooks import discard_for_task
from services.settings import Settings

log = logging.getLogger(__name__)

JSON_COLUMNS = (
    ReviewTask.candidates,
    ReviewTask.selections,
    ReviewTask.manual_overrides,
    ReviewTask.body_draft,
    ReviewTask.locked_selections,
)


def _distinct_assets(refs):
    """(assets, unresolved count): each asset once however it was named; unknown refs counted once each."""
    assets: dict = {}
    unresolved = 0
    for asset in resolve_many(refs).values():
        if asset is None:
            unresolved += 1
        else:
            assets.setdefault(asset.asset_id, asset)
    return list(assets.values()), unresolved


def referenced_elsewhere(asset: Asset) -> bool:
    """Does a remaining task refer to the asset the way task_references() counts references?

    A substring search over the JSON text finds the few candidates, which are then read for real
    references; one scan per asset, with no reference table to keep in step. `coerce(False)`: without
    it peewee would JSON-encode the pattern through JSONField.db_value.
    """
    condition = None
    for column in JSON_COLUMNS:
        for needle in {asset.asset_id, asset.url}:
            term = column.coerce(False).contains(needle)
            condition = term if condition is None else condition | term
    names = {("id", asset.asset_id), ("url", asset.url)}
    return any(ref_key(ref) in names for task in ReviewTask.select().where(condition) for ref in task_references(task))


def _delete_task_rows(task_id, if_match, stale_limit):
    """The task and what belongs to it, its review assets journaled (AssetCleanup), in one transaction.
    Returns (its assets, unresolved count)."""
    with immediate():
        task = load_for_update(task_id, if_match)
        rule_for(task.status, "delete")
        refuse_while_publishing(task, stale_limit, "the task is being published and cannot be deleted now")
        release_task(task.task_id)  # not from an edition about to be sent (docs/api.md §21)
        assets, unresolved = _distinct_assets(task_references(task))
        now = now_iso()
        rows = [{"asset_id": a.asset_id, "created_at": now} for a in assets if a.scope == "review" and a.is_local]
        if rows:
            AssetCleanup.insert_many(rows).on_conflict_ignore().execute()
        PublishJob.delete().where(PublishJob.task == task).execute()
        TimelineEvent.delete().where(TimelineEvent.task == task).execute()
        discard_for_task(task.task_id)
        forget_task(task.task_id)
        for record in IdempotencyKey.select().where(IdempotencyKey.response.coerce(False).contains(task.task_id)):
            if isinstance(record.response, dict) and record.response.get("id") == task.task_id:
                record.delete_instance()
        task.delete_instance()
    return assets, unresolved


def _review_root(uploads_root):
    return os.path.realpath(os.path.join(uploads_root, "review"))


def _review_file(asset, review_root):
    """The stored file's path when it is a plain name inside uploads/review/, else None."""
    name = asset.stored_name or ""
    if not STORED_NAME.match(name):
        return None
    path = os.path.join(review_root, name)
    if os.path.islink(path):
        return None  # never follow a link, and leave the link itself for the operator who made it
    real = os.path.realpath(path)
    return real if os.path.dirname(real) == review_root else None


def _remove_asset(asset, review_root):
    """True when the file and the asset row are gone (with one transaction, services.files.removed_file);
    False when the asset is kept (skipped)."""
    if asset.scope != "review" or not asset.is_local:
        return False
    path = _review_file(asset, review_root)
    if path is None or (os.path.lexists(path) and not os.path.isfile(path)):
        log.warning(
            "asset %s: stored name %r does not lead to a plain file in %s; kept",
            asset.asset_id,
            asset.stored_name,
            review_root,
        )
        _forget_cleanup_now(asset.asset_id)
        return False
    try:
        with removed_file(path) as set_aside, immediate():  # no task can start using it meanwhile
            _forget_cleanup(asset.asset_id)
            current = Asset.get_or_none(Asset.id == asset.id)
            if current is not None and (current.shared or referenced_elsewhere(asset)):
                return False  # still used, or handed out again to an upload (someone else may hold it)
            Asset.delete().where(Asset.id == asset.id).execute()
            if not set_aside():
                log.warning("asset %s: file %s was already missing; row removed", asset.asset_id, path)
    except (OSError, peewee.DatabaseError) as exc:
        log.warning("asset %s: could not remove %s (%s); kept", asset.asset_id, path, type(exc).__name__)
        return False
    return True


def _forget_cleanup(asset_id):
    """Inside the transaction that settles the asset: no longer journaled for removal."""
    AssetCleanup.delete().where(AssetCleanup.asset_id == asset_id).execute()


def _forget_cleanup_now(asset_id):
    """The same on its own; a failure only leaves the entry for the next start (the deletion stands)."""
    try:
        with immediate():
            _forget_cleanup(asset_id)
    except peewee.DatabaseError as exc:
        log.warning("asset %s: cleanup entry kept for the next start (%s)", asset_id, type(exc).__name__)


def recover_deletions(uploads_root: str | Path) -> int:
    """At start: review files whose deletion a stopped process left unfinished (services.files),
    then the review assets of tasks deleted before their files were gone (AssetCleanup)."""
    settled = settle_removals(
        Path(uploads_root, "review"),
        lambda name: Asset.select().where((Asset.scope == "review") & (Asset.stored_name == name)).exists(),
    )
    review_root = _review_root(uploads_root)
    for entry in list(AssetCleanup.select()):
        asset = Asset.get_or_none(Asset.asset_id == entry.asset_id)
        if asset is None:
            _forget_cleanup_now(entry.asset_id)
        elif _remove_asset(asset, review_root):
            settled += 1
            log.warning("asset %s of a deleted task removed: the deletion had stopped before its file", asset.asset_id)
    return settled


def delete_task(task_id: str, settings: Settings, if_match: str | None = None) -> dict[str, Any]:
    """Delete the task (404, 412, 409 while it is being published), then its unshared review files (§8)."""
    assets, unresolved = _delete_task_rows(task_id, if_match, stale_after(settings))
    review_root = _review_root(settings.uploads_path)
    deleted = sum(1 for asset in assets if _remove_asset(asset, review_root))
    return {
        "deletedTaskId": task_id,
        "deletedFileCount": deleted,
        "skippedAssetCount": len(assets) - deleted + unresolved,
        "redirectTo": "/review",
    }
