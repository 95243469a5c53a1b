"""Health check."""

from blueprints.openapi import Blueprint
from models import store
from schemas.system import HealthSchema

bp = Blueprint("system", __name__)


@bp.get("/healthz")
@bp.doc(errors=())
@bp.answers(200, HealthSchema)
@bp.answers(503, HealthSchema)
def healthz():
    """200 when the database answers, 503 otherwise. No auth."""
    if not store.answers():
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
