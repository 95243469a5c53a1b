"""The chat apps' callback URLs (docs/api.md §22): Feishu's card request URL and WeCom's callback URL.

A click is decided within the request (the platforms wait 3 s and 5 s): a database write, or for
approve-and-publish the approval with the publish started in the background."""

from flask import Blueprint, jsonify, request

from blueprints.common import settings, text_response
from services.chat import callbacks
from services.chat.service import feishu_answer, feishu_refusal, wecom_click
from services.errors import NotFound, ServiceError

bp = Blueprint("chat", __name__)


@bp.post("/feishu/card")
def feishu_card():
    """Feishu's URL check (the challenge back) and card clicks (a toast and the redrawn card)."""
    app = settings().team.chat.feishu
    request.max_content_length = callbacks.MAX_CALLBACK_BYTES
    try:
        if app is None:
            raise NotFound("no Feishu app is configured (FEISHU_APP_ID …)")
        opened = callbacks.feishu(app, dict(request.headers), request.get_data(cache=False), settings().event_max_age)
        if isinstance(opened, dict):
            return jsonify(opened)
        return jsonify(feishu_answer(opened, settings()))
    except ServiceError as err:
        return jsonify(feishu_refusal(err, settings())), err.status


@bp.route("/wecom/events", methods=["GET", "POST"])
def wecom_events():
    """WeCom's URL check (the decrypted echostr) and card clicks (answered at once; the card follows)."""
    app = settings().team.chat.wecom
    request.max_content_length = callbacks.MAX_CALLBACK_BYTES
    query = request.args.to_dict(flat=False)  # every copy: one given twice is refused (docs/api.md §22)
    try:
        if app is None:
            raise NotFound("no WeCom app is configured (WECOM_CORP_ID …)")
        if request.method == "GET":
            return text_response(callbacks.wecom_check(app, query, settings().event_max_age))
        click = callbacks.wecom(app, query, request.get_data(cache=False), settings().event_max_age)
        if click is not None:
            wecom_click(click, settings())
    except ServiceError as err:
        return text_response(err.message, err.status)
    return text_response("")
