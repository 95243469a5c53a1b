"""Create tables and upgrade existing databases in place.

Each migration is (version, description, function). A fresh database gets every table
created whole and is stamped with the latest version; an older file runs only the
migrations above its stamp. Migrations are written to be safe when the change already exists.
"""

from typing import Any

import peewee
from peewee import SchemaManager
from playhouse.migrate import SchemaMigrator, migrate

from models import ALL_MODELS
from models.assets import Asset
from models.base import BaseModel, db
from models.comments import ReaderComment
from models.counters import EventCounter
from models.feedback import (
    OLD_TRIGGERS,
    Feedback,
    create_search_index,
    create_search_structures,
    create_trigram_indexes,
    rebuild_character_index,
)
from models.files import PendingFile
from models.live import TaskLive
from models.outbox import OutboxMessage
from models.platform import PlatformToken
from models.presence import TaskPresence
from models.publishing import PublishLock
from models.review import PublishJob, ReviewTask, TimelineEvent
from models.stats import FIGURES, MAX_FIGURE, StatsFetch, TaskDayStats
from models.store import trigram_search_available
from models.users import AdminUser
from models.writes import immediate
from rules.articles import article_url


class SchemaTooNew(RuntimeError):
    """The database was written by a newer release: this code would serve it wrongly (docs/api.md §16)."""

    def __init__(self, found: int):
        super().__init__(
            f"the database is at schema version {found}, newer than this release knows (up to "
            f"{LATEST}): run the release that wrote it, or restore a backup this release made"
        )


class SchemaVersion(BaseModel):
    id = peewee.AutoField()
    version = peewee.IntegerField()


def _columns(model, *names):
    """A step adding `names` to `model`'s table where missing."""

    def step(database):
        table = model._meta.table_name
        present = {column.name for column in database.get_columns(table)}
        for field in (model._meta.fields[name] for name in names if name not in present):
            migrate(SchemaMigrator.from_database(database).add_column(table, field.column_name, field))

    return step


def _nothing(database):
    """A step whose new tables upgrade() creates whole."""


def _feedback_exists(database):
    return database.table_exists(Feedback._meta.table_name)


def _queue_feedback_search(database):
    """Search indexing leaves the insert: drop the per-row triggers, add the pending queue. Rows
    already stored were indexed by the old triggers, so the queue starts empty."""
    if not trigram_search_available(database) or not _feedback_exists(database):
        return
    for name in OLD_TRIGGERS:
        database.execute_sql(f"DROP TRIGGER IF EXISTS {name}")
    create_search_index(database)


def _respace_character_index(database):
    """Separators between characters are indexed as a marker token now: index the stored rows again."""
    if trigram_search_available(database) and _feedback_exists(database):
        rebuild_character_index(database)


def _drop_indexes(*names):
    def step(database):
        for name in names:
            database.execute_sql(f"DROP INDEX IF EXISTS {name}")

    return step


def _presence_per_page(database):
    """Made anew: its rows last REVIEW_PRESENCE_SECONDS, and the unique key gains the page."""
    database.execute_sql(f"DROP TABLE IF EXISTS {TaskPresence._meta.table_name}")
    SchemaManager(TaskPresence, database=database).create_table()


def _seed_publish_counts(database):
    """The jobs that have ended so far are counted once; from now on each is counted as it ends."""
    jobs = (
        PublishJob.select(PublishJob.status, PublishJob.trigger_mode, peewee.fn.COUNT(PublishJob.id))
        .where(PublishJob.finished_at.is_null(False))
        .group_by(PublishJob.status, PublishJob.trigger_mode)
    )
    rows: list[Any] = list(jobs.tuples().execute(database))  # (status, trigger, count)
    for status, trigger, count in rows:
        EventCounter.insert(
            name="review_publish_jobs", labels=f"{status},{trigger}", value=count
        ).on_conflict_ignore().as_rowcount().execute(database)


# Each step takes the database it upgrades (the bound one, or an archive or copy target of its own).
# Inserts ask for the row count: built on a model, they would otherwise ask for RETURNING when `db`
# (not the database upgraded) is PostgreSQL.
def _add_failure_columns(database):
    _columns(TaskLive, "fail_code", "fail_detail")(database)
    _columns(StatsFetch, "last_errcode")(database)


def _clear_impossible_figures(database):
    """Figures past MAX_FIGURE, stored before they were bounded, overflowed the list's sums (docs/api.md §19)."""
    for name in FIGURES:
        column = getattr(TaskDayStats, name)
        TaskDayStats.update({column: None}).where((column > MAX_FIGURE) | (column < 0)).execute(database)


def _add_decision_columns(database):
    """review_task.context and decided_at (docs/api.md §20); a task decided before has its last decision's
    moment taken from its timeline, so the dataset export finds it."""
    _columns(ReviewTask, "context", "decided_at")(database)
    last = TimelineEvent.select(peewee.fn.MAX(TimelineEvent.at)).where(
        (TimelineEvent.task == ReviewTask.id) & TimelineEvent.type.in_(("approved", "rejected"))
    )
    (
        ReviewTask.update(decided_at=last)
        .where(ReviewTask.decided_at.is_null() & ReviewTask.status.in_(("approved", "published", "rejected_rework")))
        .execute(database)
    )


def _drop_foreign_addresses(database):
    """Article addresses kept before only the platform's were (rules/articles.py) are cleared."""
    rows = TaskLive.select(TaskLive.id, TaskLive.article_url).where(TaskLive.article_url.is_null(False))
    foreign = [row.id for row in rows.execute(database) if article_url(row.article_url) is None]
    if foreign:
        TaskLive.update(article_url=None).where(TaskLive.id.in_(foreign)).execute(database)


MIGRATIONS = [
    (1, "initial tables", _nothing),
    (2, "admin_user.last_login_at", _columns(AdminUser, "last_login_at")),
    (3, "feedback search indexed after the request", _queue_feedback_search),
    (4, "review_task indexes no query uses", _drop_indexes("review_task_status", "review_task_content_type")),
    (5, "CJK character index: separators kept as a marker token", _respace_character_index),
    (6, "publish_lock.owner", _columns(PublishLock, "owner")),
    (7, "asset_cleanup: review files a task deletion still has to remove (a new table)", _nothing),
    (8, "publish_lock.progress: the step a running publish is at", _columns(PublishLock, "progress")),
    (9, "rate_hit: feedback rate limits shared by every process (a new table)", _nothing),
    (10, "PostgreSQL: trigram indexes for the feedback keyword search", create_trigram_indexes),
    (
        11,
        "event_counter: /metrics counters counted at the event, publish jobs seeded from the rows",
        _seed_publish_counts,
    ),
    (12, "outbox_message.channel: team notifications beside the agent's", _columns(OutboxMessage, "channel")),
    (13, "task_live: going live through freepublish (a new table)", _nothing),
    (14, "task_day_stats, stats_fetch: what readers did, per day (new tables)", _nothing),
    (
        15,
        "task_live.fail_code, fail_detail, stats_fetch.last_errcode: failures in the reader's language",
        _add_failure_columns,
    ),
    (
        16,
        "seen_nonce: signed pushes already taken (a new table); task_day_stats: figures above 10^12 cleared",
        _clear_impossible_figures,
    ),
    (17, "review_task.context, decided_at: decisions as data for the agent", _add_decision_columns),
    (18, "task_live.article_url: addresses other than the platform's pages cleared", _drop_foreign_addresses),
    (
        19,
        "edition (a new table); task_live.via, edition_id: articles sent to followers in an edition",
        _columns(TaskLive, "via", "edition_id"),
    ),
    (
        20,
        "chat_card (a new table); admin_user.feishu_open_id, wecom_userid: deciding from the team's chat",
        _columns(AdminUser, "feishu_open_id", "wecom_userid"),
    ),
    (21, "early_mass_event: a send's result that came before its sendall answer (a new table)", _nothing),
    (
        22,
        "platform_token.forced_at: one forced token refresh per account and 30 s, across processes",
        _columns(PlatformToken, "forced_at"),
    ),
    (23, "reader_comment, comment_proposal, comment_fetch: readers' comments (new tables)", _nothing),
    (
        24,
        "reader_comment.acted_at: a fetch that asked before an editor acted leaves the comment as the editor made it",
        _columns(ReaderComment, "acted_at"),
    ),
    (25, "task_presence: a row per open page, kept marked `left` after its leave beacon", _presence_per_page),
    (26, "asset.shared: an asset handed out again to an upload of the same bytes", _columns(Asset, "shared")),
    (
        27,
        "pending_file.owner: a file being placed is its host's to sweep (the folders may be shared)",
        _columns(PendingFile, "owner"),
    ),
]
LATEST = MIGRATIONS[-1][0]


def current_version(database: Any = None) -> int | None:
    database = db if database is None else database
    if not database.table_exists(SchemaVersion._meta.table_name):
        return None
    row = SchemaVersion.select().order_by(SchemaVersion.version.desc()).first(database)
    return row.version if row else None


def upgrade(database: Any = None) -> list[int]:
    """Bring the database (the bound one unless given another) to the latest schema; returns the
    versions applied. The tables are created and changed on that database's own connection."""
    database = db if database is None else database
    with database.connection_context():
        # The write lock up front: a second process starting at the same moment waits, then finds
        # the new version (a deferred transaction would fail when its read turned into a write).
        with immediate(database):
            found = current_version(database) or 0
            if found > LATEST:
                raise SchemaTooNew(found)
            models = [SchemaVersion, *ALL_MODELS]
            # New tables are created whole; existing ones only gain what migrations add.
            for model in models:
                if not database.table_exists(model._meta.table_name):
                    SchemaManager(model, database=database).create_table(safe=True)
                    if model is Feedback:
                        create_search_structures(database)
            applied = []
            for version, _description, step in MIGRATIONS:
                if version > found:
                    step(database)
                    applied.append(version)
            for model in models:
                SchemaManager(model, database=database).create_indexes(safe=True)
            if applied:
                SchemaVersion.delete().execute(database)
                SchemaVersion.insert(version=LATEST).as_rowcount().execute(database)
            return applied
