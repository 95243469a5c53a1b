"""The accounts' server URLs (docs/api.md §18): the platform checks them (GET) and pushes events (POST).

Answers are plain text, as the platform reads them; a bad signature is 403 and changes nothing."""

from flask import Blueprint, request

from blueprints.common import settings, text_response
from services.editions.sending import mass_finished
from services.errors import ServiceError
from services.live import events

bp = Blueprint("wechat", __name__)


@bp.route("/wechat/<account>/events", methods=["GET", "POST"])
def account_events(account):
    """GET: the server URL check (echostr back); POST: a pushed event, answered `success` within the request."""
    query = request.args.to_dict(flat=False)
    request.max_content_length = events.MAX_EVENT_BYTES  # an event is small: read no more (413)
    try:
        if request.method == "GET":
            return text_response(events.verify(account, query, settings()))
        events.receive(account, query, request.get_data(cache=False), settings(), other=mass_finished)
    except ServiceError as err:
        return text_response(err.message, err.status)
    return text_response("success")
