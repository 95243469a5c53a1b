"""Every failure becomes the JSON error of docs/api.md §2 (or an HTML page for browser pages)."""

import logging
import traceback

import peewee
from flask import Blueprint, g, render_template, request
from werkzeug.exceptions import HTTPException

from blueprints.guards import is_api_request
from services.errors import ServiceError

log = logging.getLogger("review.errors")
bp = Blueprint("errors", __name__)

HTTP_CODES = {
    400: ("validation_error", "the request could not be understood"),
    401: ("unauthorized", "credentials are missing or invalid"),
    403: ("forbidden", "you are not allowed to do this"),
    404: ("not_found", "nothing exists at this address"),
    405: ("method_not_allowed", "this method is not allowed on this address"),
    413: ("payload_too_large", "the request body is larger than this route accepts"),
    429: ("rate_limited", "too many requests; wait and try again"),
}


def _shown(value):
    """A NUL the request sent, echoed in words as `\\u0000`: a strict JSON reader refuses the character itself."""
    if isinstance(value, str):
        return value.replace("\x00", "\\u0000")
    if isinstance(value, dict):
        return {_shown(key): _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def error_response(status, code, message, details=None, headers=None):
    message, details = _shown(message), _shown(details)
    if not is_api_request():
        body = render_template("error.html", status=status, code=code, message=message)
        return body, status, headers or {}
    payload = {"error": {"code": code, "message": message, "details": details or {}}}
    return payload, status, headers or {}


@bp.app_errorhandler(ServiceError)
def handle_service_error(err):
    return error_response(err.status, err.code, err.message, err.details, err.headers)


@bp.app_errorhandler(HTTPException)
def handle_http_error(err):
    code, message = HTTP_CODES.get(err.code, ("http_error", err.name.lower()))
    headers = {}
    if err.code == 405 and getattr(err, "valid_methods", None):
        headers["Allow"] = ", ".join(err.valid_methods)
    if err.code == 429 and err.get_headers():
        headers.update({k: v for k, v in err.get_headers() if k.lower() == "retry-after"})
    details = None
    if err.code == 413 and request.max_content_length:  # the limit this route set before reading
        message = f"{message} (at most {request.max_content_length} bytes)"
        details = {"_body": [f"larger than {request.max_content_length} bytes"]}
    return error_response(err.code, code, message, details, headers=headers)


def _where(exc):
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else "?"


@bp.app_errorhandler(Exception)
def handle_unexpected(exc):
    request_id = getattr(g, "request_id", "-")
    if isinstance(exc, (peewee.OperationalError, peewee.InterfaceError)):
        # One line, no SQL or parameters: the operator gets the class and the place.
        log.error("storage failure %s at %s request_id=%s", type(exc).__name__, _where(exc), request_id)
        message = "the database could not be read or written; try again later"
        return error_response(500, "storage_unavailable", message, {"requestId": request_id})
    log.error("unexpected %s at %s request_id=%s", type(exc).__name__, _where(exc), request_id)
    message = "something went wrong on the server; the request id helps the operator"
    return error_response(500, "internal_error", message, {"requestId": request_id})
