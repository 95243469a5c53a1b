"""Reading request bodies: size limits, strict JSON, one file part, routes that take no body."""
from flask import current_app, request

from services.errors import PayloadTooLarge, ValidationFailed

# A JSON body's limit unless its route names one: a decision may carry a 200,000-character body four
# times over (selections, bodyDraft, its source, the override). Uploads and feedback have their own.
JSON_MAX_BYTES = 8 * 1024 * 1024


def limited_body(limit, advice=""):
    """The raw body, cached for the JSON parser; 413 beyond `limit` bytes, by Content-Length before
    reading. Without one (chunked), one byte past the limit is read to tell "exactly" from "more".
    The app-wide MAX_CONTENT_LENGTH still applies when it is lower."""
    limit = min(limit, current_app.config.get("MAX_CONTENT_LENGTH") or limit)
    details = {"_body": [f"larger than {limit} bytes"]}
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"the body is {request.content_length} bytes; this route takes at most {limit}{advice}",
                              details)
    request.max_content_length = limit + 1
    data = request.get_data(cache=True)
    if len(data) > limit:
        raise PayloadTooLarge(f"the body is larger than {limit} bytes{advice}", details)
    return data


def json_body(limit=JSON_MAX_BYTES):
    raw = limited_body(limit)
    try:  # app.json is the one strict JSON rule; its message says what is wrong
        data = current_app.json.loads(raw)
    except ValueError as exc:
        raise ValidationFailed(f"the request body is not valid JSON: {exc}", {"_body": ["invalid JSON"]}) from None
    if not isinstance(data, dict):
        raise ValidationFailed("the request body must be a JSON object", {"_body": ["not a JSON object"]})
    return data


def single_file(name="file"):
    """The one file part `name` of a multipart upload; none, a second one or other file parts are 400."""
    unexpected = sorted(key for key in request.files if key != name)
    if unexpected:
        raise ValidationFailed(f"unknown file field {unexpected[0]!r}; send one file as {name!r}",
                               {key: ["unknown field"] for key in unexpected})
    parts = request.files.getlist(name)
    if len(parts) > 1:
        raise ValidationFailed(f"send one file per request as {name!r}; this request has {len(parts)}",
                               {name: ["more than one file"]})
    if not parts:
        raise ValidationFailed(f"send the file as the multipart file field {name!r}", {name: ["missing"]})
    return parts[0]


def refuse_body():
    """For routes that take no request body (docs/api.md §5, §8): nothing, or an empty JSON object, else 400."""
    raw = limited_body(JSON_MAX_BYTES)
    if not raw.strip():
        return
    try:
        data = current_app.json.loads(raw)
    except ValueError:
        data = None
    if data == {}:
        return
    details = {key: ["Unknown field."] for key in data} if isinstance(data, dict) else {"_body": ["not empty"]}
    raise ValidationFailed("this route takes no request body; send none (or {})", details)
