"""Health check."""
from flask import Blueprint

from models import db

bp = Blueprint("system", __name__)


@bp.get("/healthz")
def healthz():
    """200 when the database answers, 503 otherwise. No auth."""
    try:
        db.execute_sql("SELECT 1").fetchone()
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
