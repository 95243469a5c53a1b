"""Schemas 19 and 20 (docs/api.md §21, §22) on a database written before them: the columns and tables come,
the rows stay, and an identity stays one admin's."""

import peewee
import pytest

from models import AdminUser, ChatCard, Edition, TaskLive, db
from tests.helpers.app import create_admin

pytestmark = pytest.mark.both_stores


def test_an_older_database_gains_editions_and_chat_identities(make_app, app):
    create_admin("li")
    create_admin("wang")
    with db.connection_context():
        for table, column in (
            ("admin_user", "feishu_open_id"),
            ("admin_user", "wecom_userid"),
            ("task_live", "via"),
            ("task_live", "edition_id"),
        ):
            for index in db.get_indexes(table):
                if index.columns == [column]:
                    db.execute_sql(f"DROP INDEX {index.name}")
            db.execute_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute_sql("DROP TABLE chat_card")
        db.execute_sql("DROP TABLE edition")
        db.execute_sql("UPDATE schema_version SET version = 18")
    make_app()  # restart: the upgrade runs
    with db.connection_context():
        assert {"feishu_open_id", "wecom_userid"} <= {c.name for c in db.get_columns("admin_user")}
        assert {"via", "edition_id"} <= {c.name for c in db.get_columns("task_live")}
        assert ChatCard.select().count() == Edition.select().count() == TaskLive.select().count() == 0
        AdminUser.update(feishu_open_id="ou_li").where(AdminUser.username == "li").execute()
        with pytest.raises(peewee.IntegrityError), db.atomic():
            AdminUser.update(feishu_open_id="ou_li").where(AdminUser.username != "li").execute()
