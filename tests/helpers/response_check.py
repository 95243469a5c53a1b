"""Every JSON answer any test receives is checked against the schema the OpenAPI document gives for
its route, method and status (tests/conftest.py installs this on every app it builds)."""

import re

from flask import request
from openapi_schema_validator import OAS30Validator

_DOCUMENT = {}
_VALIDATORS = {}
SELF_DESCRIBING = ("/api/openapi.json", "/api/docs")  # the document and its page
PROBLEMS = []  # (route, method, status, problem); tests/conftest.py fails a test that left any


def _document(app):
    """The app's document, one per set of accounts (WECHAT_ACCOUNTS is the publicAccount enum)."""
    key = tuple(app.extensions["settings"].accounts)
    if key not in _DOCUMENT:
        _DOCUMENT[key] = app.extensions["openapi"].spec.to_dict()
    return _DOCUMENT[key]


def _validator(schema, components):
    key = (repr(schema), id(components))  # one document per set of accounts: its own components
    if key not in _VALIDATORS:
        _VALIDATORS[key] = OAS30Validator({**schema, "components": components})
    return _VALIDATORS[key]


def check(app, response):
    rule = request.url_rule
    if rule is None or response.direct_passthrough:
        return response
    if app.view_functions[request.endpoint].__module__.startswith("tests"):
        return response  # a probe route a test added
    document = _document(app)
    path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
    operation = document["paths"].get(path, {}).get(request.method.lower())
    if operation is None:
        if path not in SELF_DESCRIBING and path.startswith("/api/") or path in ("/healthz", "/metrics"):
            PROBLEMS.append((path, request.method, response.status_code, "route not in the document"))
        return response
    documented = operation["responses"].get(str(response.status_code))
    if documented is None:
        PROBLEMS.append((path, request.method, response.status_code, "status not documented"))
        return response
    if response.mimetype != "application/json":
        return response
    schema = documented.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        PROBLEMS.append((path, request.method, response.status_code, "JSON answer documented as another type"))
        return response
    errors = sorted(_validator(schema, document["components"]).iter_errors(response.get_json()), key=str)
    if errors:
        where = "/".join(str(part) for part in errors[0].absolute_path)
        PROBLEMS.append((path, request.method, response.status_code, f"{where}: {errors[0].message[:300]}"))
    return response


def install(app):
    app.after_request(lambda response: check(app, response))
