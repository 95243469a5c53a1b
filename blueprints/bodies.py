"""Reading request input: size limits, strict JSON, one file part, routes that take no body, and a
marshmallow failure as one 400 with dotted field paths."""

from functools import wraps

from flask import current_app, request
from marshmallow import ValidationError

from rules.client_input import TextRefused
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
        raise PayloadTooLarge(
            f"the body is {request.content_length} bytes; this route takes at most {limit}{advice}", details
        )
    request.max_content_length = limit + 1
    data = request.get_data(cache=True)
    if len(data) > limit:
        raise PayloadTooLarge(f"the body is larger than {limit} bytes{advice}", details)
    return data


def json_body(limit=JSON_MAX_BYTES):
    raw = limited_body(limit)
    try:  # app.json is the one strict JSON rule; its message says what is wrong
        data = current_app.json.loads(raw)
    except TextRefused as exc:  # JSON, but text the service cannot store: named where it is
        raise ValidationFailed(f"the request body is not valid JSON: {exc}", {exc.path: [str(exc)]}) from None
    except ValueError as exc:
        raise ValidationFailed(f"the request body is not valid JSON: {exc}", {"_body": ["invalid JSON"]}) from None
    if not isinstance(data, dict):
        raise ValidationFailed("the request body must be a JSON object", {"_body": ["not a JSON object"]})
    return data


def single_file():
    """The one file part "file" of a multipart upload; none, a second one or other file parts are 400."""
    name = "file"
    unexpected = sorted(key for key in request.files if key != name)
    if unexpected:
        raise ValidationFailed(
            f"unknown file field {unexpected[0]!r}; send one file as {name!r}",
            {key: ["unknown field"] for key in unexpected},
        )
    parts = request.files.getlist(name)
    if len(parts) > 1:
        raise ValidationFailed(
            f"send one file per request as {name!r}; this request has {len(parts)}", {name: ["more than one file"]}
        )
    if not parts:
        raise ValidationFailed(f"send the file as the multipart file field {name!r}", {name: ["missing"]})
    return parts[0]


def no_body(view):
    """For routes that take no request body (docs/api.md §5, §8): nothing, or an empty JSON object, else 400."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        raw = limited_body(JSON_MAX_BYTES)
        try:
            data = current_app.json.loads(raw) if raw.strip() else {}
        except ValueError:
            data = None
        if data != {}:
            details = {key: ["Unknown field."] for key in data} if isinstance(data, dict) else {"_body": ["not empty"]}
            raise ValidationFailed("this route takes no request body; send none (or {})", details)
        return view(*args, **kwargs)

    return wrapper


def flatten_errors(messages, prefix=""):
    """marshmallow's nested error dict -> {"a.b.0.c": ["msg"]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, dict):
        for key, value in messages.items():
            path = prefix if key == "_schema" else (f"{prefix}.{key}" if prefix else str(key))
            for sub_key, sub_value in flatten_errors(value, path).items():
                flat.setdefault(sub_key, []).extend(sub_value)
    elif isinstance(messages, list) and messages and all(isinstance(m, str) for m in messages):
        flat[prefix or "_body"] = list(messages)
    elif isinstance(messages, list):
        for message in messages:
            for sub_key, sub_value in flatten_errors(message, prefix).items():
                flat.setdefault(sub_key, []).extend(sub_value)
    else:
        flat[prefix or "_body"] = [str(messages)]
    return flat


def validation_failed(messages, where="body"):
    """marshmallow's messages as the one 400 of docs/api.md §2."""
    details = flatten_errors(messages)
    first = next(iter(details.items()), ("", ["invalid"]))
    label = first[0] if first[0] not in ("", "_body") else where
    return ValidationFailed(f"invalid {where}: {label}: {first[1][0]}", details)


_INSTANCES: dict[type, object] = {}


def instance(schema):
    """One instance per schema class: building a nested schema costs more than loading with it."""
    if isinstance(schema, type):
        schema = _INSTANCES.setdefault(schema, schema())
    return schema


def load(schema, data, *, unknown=None, where="body"):
    """Validate with a marshmallow schema (a route that reads its input itself); failures are one 400."""
    try:
        return instance(schema).load(data, **({"unknown": unknown} if unknown else {}))
    except ValidationError as err:
        raise validation_failed(err.messages, where) from None
