"""Health check."""
import os

import peewee
from flask import Blueprint

from blueprints.apidoc import api
from models import db
from schemas.system import HealthSchema

bp = Blueprint("system", __name__)


@bp.get("/healthz")
@api(responses={200: HealthSchema, 503: HealthSchema}, errors=(), tags=["system"])
def healthz():
    """200 when the database answers, 503 otherwise. No auth."""
    try:
        if isinstance(db.obj, peewee.SqliteDatabase) and not os.path.isfile(db.obj.database):
            raise OSError("database file missing")  # a pooled connection may still hold the old file
        db.execute_sql("SELECT 1").fetchone()
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
