"""Route declarations that validate input and feed the OpenAPI document from the same schemas."""
import inspect
import re
from functools import wraps
from http import HTTPStatus

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Blueprint, current_app, render_template, request
from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate

from blueprints.apidoc_document import OVERVIEW, RESPONSE_HEADERS, allow_empty_queries, strict_nullable, webhook
from blueprints.bodies import JSON_MAX_BYTES, json_body, refuse_body
from rules.limits import IDEMPOTENCY_HOURS, IDEMPOTENCY_KEY_MAX
from schemas.common import QuerySchema
from schemas.jsonschema import schema_extra, stating_exclusive_ranges
from schemas.review import TaskSchema
from schemas.review.events import WEBHOOKS
from schemas.review.presence import PresenceResultSchema
from services.errors import ERROR_CODES, ValidationFailed
from services.review.concurrency import IF_MATCH_PATTERN

bp = Blueprint("apidoc", __name__)

ERROR_STATUSES = {
    400: "Invalid input (validation_error)",
    401: "Missing or invalid credentials (unauthorized)",
    403: "Credentials lack the permission, or a cross-origin write (forbidden)",
    404: "Unknown resource (not_found)",
    405: "Method not allowed",
    409: "Conflict with the current state (invalid_state, field_locked, duplicate_feedback, ...)",
    412: "If-Match does not match the current version (precondition_failed)",
    413: "Body or file too large (payload_too_large)",
    429: "Rate limited; see Retry-After (rate_limited)",
    500: "Storage or internal failure",
    502: "The WeChat platform refused the call (platform_error; details: errcode, errmsg)",
}

# Request headers, each declared once (response headers: apidoc_document.RESPONSE_HEADERS);
# _request_headers and _response_headers say which operations have them.
REQUEST_HEADERS: dict[str, dict] = {
    "If-Match": {"description": 'The task\'s ETag ("3", or several comma-separated, or *) the change is based '
                                "on; when the task has moved on, nothing changes and the answer is 412",
                 "schema": {"type": "string", "pattern": IF_MATCH_PATTERN}},
    "Idempotency-Key": {"description": f"Kept {IDEMPOTENCY_HOURS} hours: a repeat with the same body gets the "
                                       "stored answer (Idempotent-Replayed: true), a different body 409 "
                                       "idempotency_conflict",
                        "schema": {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX}},
}
ERROR_HEADERS = {412: ("ETag",), 429: ("Retry-After",)}
PATH_ARGUMENT = re.compile(r"<(?:[^:>]+:)?([^>]+)>")  # <name> or <converter:name>


class ErrorBodySchema(Schema):
    code = fields.String(required=True, validate=validate.OneOf(ERROR_CODES))
    message = fields.String(required=True, metadata={"description": "one sentence for people"})
    details = fields.Dict(required=True, keys=fields.String(), values=fields.Raw(), metadata={"description": (
        "validation_error: the dotted path of each refused field (selections.title, candidates.bodyOptions.0."
        "outline) -> a list of messages. Other codes name what they concern the same way: precondition_failed "
        "{currentVersion}, invalid_state {status, allowedFrom}, field_locked {field: allowed keys}, "
        "publish_in_progress {jobId}, duplicate_feedback {feedbackId, feedbackNo}, export_failed "
        "{faultyImages}, internal_error {requestId}")})


class ErrorSchema(Schema):
    error = fields.Nested(ErrorBodySchema, required=True)


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


_INSTANCES: dict[type[Schema], Schema] = {}


def _instance(schema):
    """One instance per schema class: building a nested schema costs more than loading with it."""
    if not isinstance(schema, type):
        return schema
    if schema not in _INSTANCES:
        _INSTANCES[schema] = schema()
    return _INSTANCES[schema]


def load(schema, data, *, unknown=None, where="body"):
    """Validate with a marshmallow schema; failures become one 400 with dotted field paths."""
    try:
        return _instance(schema).load(data, **({"unknown": unknown} if unknown else {}))
    except ValidationError as err:
        details = flatten_errors(err.messages)
        first = next(iter(details.items()), ("", ["invalid"]))
        label = first[0] if first[0] not in ("", "_body") else where
        raise ValidationFailed(f"invalid {where}: {label}: {first[1][0]}", details) from None


class NoBody:
    """A documented answer without a body (a redirect, 304), with the RESPONSE_HEADERS it carries."""

    def __init__(self, description, headers=()):
        self.description, self.headers = description, tuple(headers)


def api(*, body=None, query=None, form=None, files=(), responses=None, errors=None, summary=None, tags=None,
        max_bytes=JSON_MAX_BYTES, no_body=False):
    """Declare a JSON route: `body`/`query` schemas are loaded and passed as keyword arguments.

    `form` documents a form body with the schema the route validates it with (the route reads it
    itself, after its size limit); `files` names its file parts, which make it multipart.
    `responses` maps status -> schema, [schema] (a bare array), a media type string such as
    "application/zip", a tuple of media types, or NoBody. `errors` narrows the ERROR_STATUSES
    documented (default: all of them). A `body` over `max_bytes` is 413 before it is parsed;
    `no_body` routes refuse any body but an empty one (400).
    """

    def decorator(view):
        guard = view.__dict__.get("_guard")
        if guard is not None:
            # Credentials are checked before input: re-apply the guard above the validation.
            return guard(decorator(view.__wrapped__))

        @wraps(view)
        def wrapper(*args, **kwargs):
            if query is not None:
                kwargs["query"] = load(query, request.args.to_dict(), unknown=EXCLUDE, where="query")
            if body is not None:
                kwargs["body"] = load(body, json_body(max_bytes))
            elif no_body:
                refuse_body()
            return view(*args, **kwargs)

        _describe(wrapper, {
            "body": body, "query": query, "form": form, "files": tuple(files), "responses": responses or {200: None},
            "errors": ERROR_STATUSES if errors is None else errors,
            "summary": summary or (view.__doc__ or "").strip().split("\n")[0], "tags": tags,
            # The docstring's further paragraphs, when it has any, describe the operation.
            "description": inspect.cleandoc(view.__doc__ or "").partition("\n\n")[2] or None,
        })
        return wrapper

    return decorator


def _describe(view, operation):
    """What the OpenAPI document says of the route (build_spec reads it, documents_body adds to it)."""
    view._openapi = operation


def documents_body(schema):
    """For a route that reads its JSON body itself (limits come before validation, or a failure is
    not a 400): @api gets no `body=` to load, and this puts the schema into the document all the same.
    Goes above @api."""

    def decorator(view):
        view._openapi["body"] = schema
        return view

    return decorator


def _media(target, spec):
    if target is None:
        return {"application/json": {"schema": {"type": "object"}}}
    if isinstance(target, (str, tuple)):  # one media type, or several a file route may send
        types = (target,) if isinstance(target, str) else target
        # JSON Lines (application/x-ndjson) is text of many documents, not one object.
        return {t: {"schema": {"type": "object"} if t.endswith("/json") else {"type": "string", "format": "binary"}}
                for t in types}
    if isinstance(target, list):  # [Schema] = bare JSON array
        return {"application/json": {"schema": {"type": "array", "items": _schema_ref(target[0], spec)}}}
    return {"application/json": {"schema": _schema_ref(target, spec)}}


def _form(schema, files, converter):
    """The form fields with the rules of the schema that validates them, plus the file parts."""
    document = converter.schema2jsonschema(_instance(schema))
    document["properties"] = {**document["properties"], **{name: {"type": "string", "format": "binary"}
                                                           for name in files}}
    document["required"] = [*document.get("required", ()), *files]
    return {("multipart/form-data" if files else "application/x-www-form-urlencoded"): {"schema": document}}


def _schema_ref(schema, spec):
    name = (schema if isinstance(schema, type) else type(schema)).__name__.removesuffix("Schema")
    if name not in spec.components.schemas:
        spec.components.schema(name, component=schema_extra(schema), schema=schema)
    return {"$ref": f"#/components/schemas/{name}"}


def _request_headers(method, rule, meta):
    names = []
    if method != "GET" and "task_id" in rule.arguments and meta["responses"].get(200) is not PresenceResultSchema:
        names.append("If-Match")  # every write to one task (docs/api.md §4); a heartbeat changes no task
    if method == "POST" and meta["responses"].get(201) is TaskSchema:
        names.append("Idempotency-Key")  # task creation
    return names  # apispec turns a component's name into its $ref


def _response_headers(method, status, target):
    """What blueprints/review.py's task_response and list_response send, and the creation route adds."""
    names = list(target.headers) if isinstance(target, NoBody) else []
    if target is TaskSchema:
        names.append("ETag")
        if method == "POST" and status == 201:
            names += ["Location", "Idempotent-Replayed"]
    if target == [TaskSchema]:
        names += ["X-Total-Count", "Link"]
    return {name: name for name in names}  # apispec turns a component's name into its $ref


def _response(method, status, target, spec):
    answer = {"description": target.description if isinstance(target, NoBody) else HTTPStatus(status).phrase}
    if not isinstance(target, NoBody):
        answer["content"] = _media(target, spec)
    if headers := _response_headers(method, status, target):
        answer["headers"] = headers
    return answer


def build_spec(app):
    plugin = MarshmallowPlugin()
    spec = APISpec(
        title="Content review and publishing service", version="1.0.0", openapi_version="3.0.3", plugins=[plugin],
        info={"description": OVERVIEW},
    )
    stating_exclusive_ranges(plugin)
    for name, where, key in (("adminSession", "cookie", "review_admin_session"),
                             ("agentToken", "header", "x-review-agent-token"),
                             ("clientToken", "header", "x-feedback-client-token")):
        spec.components.security_scheme(name, {"type": "apiKey", "in": where, "name": key})
    for name, header in REQUEST_HEADERS.items():
        spec.components.parameter(name, "header", {"name": name, "required": False, **header})
    for name, header in RESPONSE_HEADERS.items():
        spec.components.header(name, header)
    error_ref = _schema_ref(ErrorSchema, spec)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        view = app.view_functions[rule.endpoint]
        meta = getattr(view, "_openapi", None)
        if meta is None:
            continue
        path = PATH_ARGUMENT.sub(r"{\1}", rule.rule)
        # In the order of the path (rule.arguments is a set, whose order changes from run to run).
        params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                  for n in PATH_ARGUMENT.findall(rule.rule)]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            op = {"summary": meta["summary"], "parameters": [*params, *_request_headers(method, rule, meta)],
                  "responses": {}}
            if meta["tags"]:
                op["tags"] = meta["tags"]
            if meta["description"]:
                op["description"] = meta["description"]
            if meta["query"] is not None:
                if not isinstance(_instance(meta["query"]), QuerySchema):
                    raise TypeError(f"{rule.rule}: query schemas derive from schemas.common.QuerySchema")
                op["parameters"].append({"in": "query", "schema": _instance(meta["query"])})
            content = {}
            if meta["body"] is not None:
                content.update(_media(meta["body"], spec))
            if meta["form"] is not None:
                content.update(_form(meta["form"], meta["files"], plugin.converter))
            if content:
                op["requestBody"] = {"required": True, "content": content}
            for status, target in meta["responses"].items():
                op["responses"][str(status)] = _response(method, status, target, spec)
            for status in meta["errors"]:
                error = {"description": ERROR_STATUSES[status], "content": {"application/json": {"schema": error_ref}}}
                if status in ERROR_HEADERS:
                    error["headers"] = {name: name for name in ERROR_HEADERS[status]}
                op["responses"].setdefault(str(status), error)
            auth = getattr(view, "_auth", [])
            op["security"] = [{scheme: []} for scheme in auth]
            spec.path(path=path, operations={method.lower(): op})
    # The body schemas are registered before to_dict.
    webhooks = {event_type: {"post": webhook(event_type, when, _schema_ref(body, spec))}
                for event_type, (_, body, when) in WEBHOOKS.items()}
    document = allow_empty_queries(spec.to_dict())
    document["x-webhooks"] = webhooks
    return strict_nullable(document)


@bp.get("/api/openapi.json")
def openapi_json():
    """The OpenAPI 3 document, generated from the route declarations."""
    if "openapi_doc" not in current_app.extensions:
        current_app.extensions["openapi_doc"] = build_spec(current_app)
    return current_app.extensions["openapi_doc"]


@bp.get("/api/docs")
def docs_page():
    """A page that renders the OpenAPI document without any external assets."""
    return render_template("api_docs.html")
