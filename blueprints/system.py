"""Health check."""
from flask import Blueprint

from blueprints.apidoc import api
from models import store
from schemas.system import HealthSchema

bp = Blueprint("system", __name__)


@bp.get("/healthz")
@api(responses={200: HealthSchema, 503: HealthSchema}, errors=(), tags=["system"])
def healthz():
    """200 when the database answers, 503 otherwise. No auth."""
    if not store.answers():
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
