"""Create tables and upgrade existing databases in place.

Each migration is (version, description, function). A fresh database gets every table
created whole and is stamped with the latest version; an older file runs only the
migrations above its stamp. Migrations are written to be safe when the change already exists.
"""
from typing import Any

import peewee
from playhouse.migrate import SchemaMigrator, migrate

from models import ALL_MODELS
from models.base import BaseModel, db
from models.counters import EventCounter
from models.feedback import (
    OLD_TRIGGERS,
    Feedback,
    create_search_index,
    create_trigram_indexes,
    rebuild_character_index,
    search_index_supported,
)
from models.outbox import OutboxMessage
from models.publishing import PublishLock
from models.review import PublishJob
from models.users import AdminUser
from models.writes import immediate


class SchemaTooNew(RuntimeError):
    """The database was written by a newer release: this code would serve it wrongly (docs/api.md §16)."""

    def __init__(self, found: int):
        super().__init__(f"the database is at schema version {found}, newer than this release knows (up to "
                         f"{LATEST}): run the release that wrote it, or restore a backup this release made")


class SchemaVersion(BaseModel):
    id = peewee.AutoField()
    version = peewee.IntegerField()


def _add_column_if_missing(model, field_name):
    table = model._meta.table_name
    if field_name in {c.name for c in db.get_columns(table)}:
        return
    field = model._meta.fields[field_name]
    migrate(SchemaMigrator.from_database(db.obj).add_column(table, field.column_name, field))


def _queue_feedback_search():
    """Search indexing leaves the insert: drop the per-row triggers, add the pending queue. Rows
    already stored were indexed by the old triggers, so the queue starts empty."""
    if not search_index_supported() or not Feedback.table_exists():
        return
    for name in OLD_TRIGGERS:
        db.execute_sql(f"DROP TRIGGER IF EXISTS {name}")
    create_search_index()


def _respace_character_index():
    """Separators between characters are indexed as a marker token now: index the stored rows again."""
    if search_index_supported() and Feedback.table_exists():
        rebuild_character_index()


def _drop_indexes(*names):
    for name in names:
        db.execute_sql(f"DROP INDEX IF EXISTS {name}")


def _seed_publish_counts():
    """The jobs that have ended so far are counted once; from now on each is counted as it ends."""
    jobs = (PublishJob.select(PublishJob.status, PublishJob.trigger_mode, peewee.fn.COUNT(PublishJob.id))
            .where(PublishJob.finished_at.is_null(False)).group_by(PublishJob.status, PublishJob.trigger_mode))
    rows: list[Any] = list(jobs.tuples())  # (status, trigger, count)
    for status, trigger, count in rows:
        EventCounter.insert(name="review_publish_jobs", labels=f"{status},{trigger}", value=count).on_conflict_ignore(
        ).execute()


MIGRATIONS = [
    (1, "initial tables", lambda: None),
    (2, "admin_user.last_login_at", lambda: _add_column_if_missing(AdminUser, "last_login_at")),
    (3, "feedback search indexed after the request", _queue_feedback_search),
    (4, "review_task indexes no query uses", lambda: _drop_indexes("review_task_status", "review_task_content_type")),
    (5, "CJK character index: separators kept as a marker token", _respace_character_index),
    (6, "publish_lock.owner", lambda: _add_column_if_missing(PublishLock, "owner")),
    (7, "asset_cleanup: review files a task deletion still has to remove (a new table)", lambda: None),
    (8, "publish_lock.progress: the step a running publish is at",
     lambda: _add_column_if_missing(PublishLock, "progress")),
    (9, "rate_hit: feedback rate limits shared by every process (a new table)", lambda: None),
    (10, "PostgreSQL: trigram indexes for the feedback keyword search", create_trigram_indexes),
    (11, "event_counter: /metrics counters counted at the event, publish jobs seeded from the rows",
     _seed_publish_counts),
    (12, "outbox_message.channel: team notifications beside the agent's", lambda: _add_column_if_missing(
        OutboxMessage, "channel")),
]
LATEST = MIGRATIONS[-1][0]


def current_version() -> int | None:
    if not db.table_exists(SchemaVersion._meta.table_name):
        return None
    row = SchemaVersion.select().order_by(SchemaVersion.version.desc()).first()
    return row.version if row else None


def upgrade() -> list[int]:
    """Bring the bound database to the latest schema; returns the versions applied."""
    with db.connection_context():
        # The write lock up front: a second process starting at the same moment waits, then finds
        # the new version (a deferred transaction would fail when its read turned into a write).
        with immediate():
            found = current_version() or 0
            if found > LATEST:
                raise SchemaTooNew(found)
            models = [SchemaVersion, *ALL_MODELS]
            # New tables are created whole; existing ones only gain what migrations add.
            db.create_tables([m for m in models if not m.table_exists()], safe=True)
            applied = []
            for version, _description, step in MIGRATIONS:
                if version > found:
                    step()
                    applied.append(version)
            for model in models:
                model._schema.create_indexes(safe=True)  # type: ignore[attr-defined]  # not in peewee's hints
            if applied:
                SchemaVersion.delete().execute()
                SchemaVersion.create(version=LATEST)
            return applied
