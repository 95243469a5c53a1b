"""Route declarations that validate input and feed the OpenAPI document from the same schemas."""
import re
from functools import wraps

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Blueprint, current_app, render_template, request
from marshmallow import EXCLUDE, Schema, ValidationError, fields

from services.errors import ValidationFailed

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
}


class ErrorBodySchema(Schema):
    code = fields.String(required=True)
    message = fields.String(required=True)
    details = fields.Dict(required=True)


class ErrorSchema(Schema):
    error = fields.Nested(ErrorBodySchema, required=True)


def flatten_errors(messages, prefix=""):
    """marshmallow's nested error dict -> {"a.b.0.c": ["msg"]}."""
    flat = {}
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


_INSTANCES = {}


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


def json_body():
    try:  # app.json is the one strict JSON rule; its message says what is wrong
        data = current_app.json.loads(request.get_data(cache=True))
    except ValueError as exc:
        raise ValidationFailed(f"the request body is not valid JSON: {exc}", {"_body": ["invalid JSON"]}) from None
    if not isinstance(data, dict):
        raise ValidationFailed("the request body must be a JSON object", {"_body": ["not a JSON object"]})
    return data


def api(*, body=None, query=None, form=None, responses=None, summary=None, tags=None):
    """Declare a JSON route: `body`/`query` schemas are loaded and passed as keyword arguments.

    `form` documents a multipart body ({"field": "file" | "string"}); `responses` maps status ->
    schema, a media type string such as "application/zip", or a tuple of media types.
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
                kwargs["body"] = load(body, json_body())
            return view(*args, **kwargs)

        wrapper._openapi = {
            "body": body, "query": query, "form": form, "responses": responses or {200: None},
            "summary": summary or (view.__doc__ or "").strip().split("\n")[0], "tags": tags,
        }
        return wrapper

    return decorator


def _media(target, spec):
    if target is None:
        return {"application/json": {"schema": {"type": "object"}}}
    if isinstance(target, (str, tuple)):  # one media type, or several a file route may send
        types = (target,) if isinstance(target, str) else target
        return {t: {"schema": {"type": "object"} if "json" in t else {"type": "string", "format": "binary"}}
                for t in types}
    if isinstance(target, list):  # [Schema] = bare JSON array
        return {"application/json": {"schema": {"type": "array", "items": _schema_ref(target[0], spec)}}}
    return {"application/json": {"schema": _schema_ref(target, spec)}}


def _schema_ref(schema, spec):
    name = (schema if isinstance(schema, type) else type(schema)).__name__.removesuffix("Schema")
    if name not in spec.components.schemas:
        spec.components.schema(name, schema=schema)
    return {"$ref": f"#/components/schemas/{name}"}


def build_spec(app):
    spec = APISpec(
        title="Content review and publishing service", version="1.0.0", openapi_version="3.0.3",
        plugins=[MarshmallowPlugin()],
    )
    for name, where, key in (("adminSession", "cookie", "review_admin_session"),
                             ("agentToken", "header", "x-review-agent-token"),
                             ("clientToken", "header", "x-feedback-client-token")):
        spec.components.security_scheme(name, {"type": "apiKey", "in": where, "name": key})
    error_ref = _schema_ref(ErrorSchema, spec)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        view = app.view_functions[rule.endpoint]
        meta = getattr(view, "_openapi", None)
        if meta is None:
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in rule.arguments]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            op = {"summary": meta["summary"], "parameters": list(params), "responses": {}}
            if meta["tags"]:
                op["tags"] = meta["tags"]
            if meta["query"] is not None:
                op["parameters"].append({"in": "query", "schema": _instance(meta["query"])})
            if meta["body"] is not None:
                op["requestBody"] = {"required": True, "content": _media(meta["body"], spec)}
            if meta["form"]:
                props = {k: ({"type": "string", "format": "binary"} if v == "file" else {"type": "string"})
                         for k, v in meta["form"].items()}
                op["requestBody"] = {"required": True, "content": {"multipart/form-data": {
                    "schema": {"type": "object", "properties": props,
                               "required": [k for k, v in meta["form"].items() if v == "file"]}}}}
            for status, target in meta["responses"].items():
                op["responses"][str(status)] = {"description": "Success", "content": _media(target, spec)}
            for status, text in ERROR_STATUSES.items():
                op["responses"].setdefault(str(status), {
                    "description": text, "content": {"application/json": {"schema": error_ref}}})
            auth = getattr(view, "_auth", [])
            op["security"] = [{scheme: []} for scheme in auth]
            spec.path(path=path, operations={method.lower(): op})
    return spec.to_dict()


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
