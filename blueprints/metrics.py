"""GET /metrics for Prometheus (docs/api.md §11), and the per-request observation that feeds it."""

import hmac
import time

from flask import Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST

from blueprints.common import settings
from blueprints.openapi import Blueprint
from services.errors import NotFound, Unauthorized
from services.operations.metrics import Metrics

bp = Blueprint("metrics", __name__)
FEEDBACK_CREATE = "feedback.create_feedback"


def init_app(app):
    config = app.extensions["settings"]
    app.extensions["metrics"] = metrics = Metrics(config.webhook_url, config.webhook_events, config.team.channels)

    @app.after_request
    def observe(response):
        route = request.url_rule.rule if request.url_rule else "<unmatched>"
        seconds = time.perf_counter() - g.get("started", time.perf_counter())
        metrics.observe(request.method, route, response.status_code, seconds)
        if request.endpoint == FEEDBACK_CREATE:
            metrics.feedback_answered(response.status_code)
        return response


@bp.get("/metrics")
@bp.doc(errors=(401, 404, 500))
@bp.answers(200, media=CONTENT_TYPE_LATEST)
def metrics():
    """Prometheus text format; `Authorization: Bearer <METRICS_TOKEN>` (404 while the setting is unset)."""
    token = settings().metrics_token
    if not token:
        raise NotFound("metrics are off: set METRICS_TOKEN to turn them on")
    if not hmac.compare_digest(request.headers.get("Authorization", "").encode(), f"Bearer {token}".encode()):
        raise Unauthorized("send Authorization: Bearer <METRICS_TOKEN>")
    return Response(current_app.extensions["metrics"].exposition(), content_type=CONTENT_TYPE_LATEST)
