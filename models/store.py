"""The seam between the two stores: what services and views need that SQLite and PostgreSQL do
differently, asked here so that nothing outside models/ asks which store it runs on."""
import os
from typing import Any

import peewee

from models.base import db
from models.feedback import fold_case


def on_sqlite() -> bool:
    """For models/ only (tests/test_architecture.py keeps store branches here)."""
    return isinstance(db.obj, peewee.SqliteDatabase)


def answers() -> bool:
    """Whether the store answers a query now (the health check)."""
    try:
        if on_sqlite() and not os.path.isfile(db.obj.database):
            return False  # a pooled connection may still hold a deleted file
        db.execute_sql("SELECT 1").fetchone()
    except Exception:  # noqa: BLE001 - any failure means "not answering"
        return False
    return True


def contains_folded(column: peewee.Field, keyword: str) -> Any:
    """`column` contains `keyword`, letters compared case-folded on either store: PostgreSQL's ILIKE
    folds every letter; SQLite's LIKE folds ASCII only, so other keywords compare through fold_case."""
    if keyword.isascii() or not on_sqlite():
        return column.contains(keyword)  # escapes % and _
    return peewee.fn.instr(peewee.fn.fold_case(column), fold_case(keyword)) > 0
