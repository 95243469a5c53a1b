"""The OpenAPI document keeps what the auditor found missing: the sign-in/out, health and file
routes, form fields with the rules that validate them, request and response headers, date-time
formats (tests/api/test_schemathesis.py checks that the answers match it)."""

import json
from pathlib import Path

import pytest
from openapi_spec_validator import validate as validate_spec

from models import db
from rules.limits import IDEMPOTENCY_KEY_MAX as MAX_KEY_LENGTH
from rules.vocabulary import ATTACHMENT_KINDS
from schemas.assets import UPLOAD_SCOPES
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.openapi import resolved, schema_validator

ROOT = Path(__file__).resolve().parents[2]
TASK = "#/components/schemas/Task"
TASK_WRITES = {
    ("patch", "/api/review/agent/tasks/{task_id}/elements"),
    ("post", "/api/review/tasks/{task_id}/decision"),
    ("post", "/api/review/tasks/{task_id}/publish-jobs"),
    ("post", "/api/review/tasks/{task_id}/publish-jobs/{job_id}/retry"),
    ("delete", "/api/review/tasks/{task_id}"),
    ("post", "/api/review/tasks/{task_id}/preview"),
    ("delete", "/api/review/tasks/{task_id}/go-live"),
}
GO_LIVE = ("post", "/api/review/tasks/{task_id}/go-live")  # a task write answered 202 (docs/api.md §18)


@pytest.fixture
def document(client):
    document = client.get("/api/openapi.json").get_json()
    validate_spec(document)
    return document


def operations(document):
    return [
        (method, path, op)
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if method != "parameters"
    ]  # the path's own parameters


def header_parameters(op):
    return {p["$ref"].rsplit("/", 1)[1] for p in op.get("parameters", []) if "$ref" in p}


def response_headers(op, status):
    return set(op["responses"][status].get("headers", {}))


def form_schema(document, path, media="multipart/form-data"):
    return resolved(document, document["paths"][path]["post"]["requestBody"]["content"][media]["schema"])


def test_sign_in_is_documented_as_form_fields_or_json_answered_with_303(document):
    login = document["paths"]["/api/auth/login"]["post"]
    content = login["requestBody"]["content"]
    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/Login"}
    for body in (
        document["components"]["schemas"]["Login"],
        form_schema(document, "/api/auth/login", "application/x-www-form-urlencoded"),
    ):
        assert set(body["properties"]) == {"username", "password", "next"}
        assert set(body["required"]) == {"username", "password"}
    answer = login["responses"]["303"]
    assert "content" not in answer and set(answer["headers"]) == {"Location"}
    for where in ("/review", "`next`", "invalid_credentials", "too_many_attempts"):
        assert where in answer["description"], where
    assert "200" not in login["responses"] and login["security"] == []


def test_sign_out_is_documented_for_get_and_post(document):
    logout = document["paths"]["/api/auth/logout"]
    assert set(logout) == {"get", "post"}
    for op in logout.values():
        assert "/login" in op["responses"]["303"]["description"] and response_headers(op, "303") == {"Location"}
    assert "403" in logout["post"]["responses"]  # a cross-origin POST with a session


def test_health_and_file_routes_are_documented(document):
    health = document["paths"]["/healthz"]["get"]
    for status in ("200", "503"):
        assert health["responses"][status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Health"
        }
    assert document["components"]["schemas"]["Health"]["properties"]["status"]["enum"] == ["ok", "unavailable"]
    assert health["security"] == []

    assert [p["name"] for p in document["paths"]["/uploads/{scope}/{name}"]["parameters"]] == ["scope", "name"]
    served = document["paths"]["/uploads/{scope}/{name}"]["get"]
    assert {"image/png", "image/jpeg", "image/gif"} <= set(served["responses"]["200"]["content"])
    assert {"304", "401", "404"} <= set(served["responses"])
    assert served["security"] == [{"agentToken": []}, {"adminSession": []}]


def test_form_fields_carry_the_rules_of_the_schemas_that_validate_them(document):
    attachment = form_schema(document, "/api/feedbacks/{feedback_id}/attachments")
    assert attachment["properties"]["kind"]["enum"] == list(ATTACHMENT_KINDS) == ["screenshot", "log_file"]
    assert attachment["properties"]["file"] == {"type": "string", "format": "binary"}
    assert set(attachment["required"]) == {"kind", "file"}

    upload = form_schema(document, "/api/assets/upload")
    assert upload["properties"]["scope"]["enum"] == list(UPLOAD_SCOPES) == ["review", "library"]
    assert upload["properties"]["scope"]["default"] == "review"
    assert upload["properties"]["file"] == {"type": "string", "format": "binary"}
    assert upload["required"] == ["file"]


def test_request_headers_are_declared_where_they_apply(document):
    parameters = document["components"]["parameters"]
    assert parameters["If-Match"]["in"] == parameters["Idempotency-Key"]["in"] == "header"
    assert parameters["Idempotency-Key"]["schema"]["maxLength"] == MAX_KEY_LENGTH

    def having(name):
        return {(method, path) for method, path, op in operations(document) if name in header_parameters(op)}

    assert having("If-Match") == TASK_WRITES | {GO_LIVE}
    assert having("Idempotency-Key") == {("post", "/api/review/agent/tasks")}


def test_response_headers_are_declared_where_they_apply(document):
    assert {"ETag", "Link", "X-Total-Count", "Retry-After", "Idempotent-Replayed", "Location"} <= set(
        document["components"]["headers"]
    )
    paths = document["paths"]
    create = paths["/api/review/agent/tasks"]["post"]
    assert response_headers(create, "201") == {"ETag", "Location", "Idempotent-Replayed"}
    for method, path in [
        *TASK_WRITES - {("delete", "/api/review/tasks/{task_id}")},
        ("get", "/api/review/tasks/{task_id}"),
        ("get", "/api/review/agent/tasks/{task_id}"),
    ]:
        assert paths[path][method]["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": TASK}
        assert "ETag" in response_headers(paths[path][method], "200"), (method, path)
    assert "ETag" in response_headers(paths[GO_LIVE[1]][GO_LIVE[0]], "202")
    for path in ("/api/review/tasks", "/api/review/agent/tasks"):
        assert response_headers(paths[path]["get"], "200") == {"X-Total-Count", "Link"}
    for method, path, op in operations(document):
        if "429" in op["responses"]:
            assert response_headers(op, "429") == {"Retry-After"}, (method, path)
    assert "429" in paths["/api/feedbacks"]["post"]["responses"]


def test_every_timestamp_is_a_date_time(document):
    schemas = document["components"]["schemas"]
    expected = {
        ("Task", "createdAt"),
        ("Task", "updatedAt"),
        ("TimelineEvent", "at"),
        ("PublishJob", "queuedAt"),
        ("PublishJob", "startedAt"),
        ("PublishJob", "finishedAt"),
        ("Asset", "createdAt"),
        ("FeedbackAttachment", "createdAt"),
        ("FeedbackDetail", "processedAt"),
        ("FeedbackDetail", "occurredAt"),
        ("FeedbackListItem", "updatedAt"),
    }
    stamps = {
        (name, prop)
        for name, shape in schemas.items()
        for prop in shape.get("properties", {})
        if prop == "at" or prop.endswith("At")
    }
    assert expected <= stamps
    for name, prop in stamps:
        assert schemas[name]["properties"][prop].get("format") == "date-time", (name, prop)


def test_invalid_json_is_worded_alike_on_every_route(client):
    sent = {
        "/api/feedbacks": {"x-feedback-client-token": "client-web-token"},
        "/api/review/agent/tasks": {"x-review-agent-token": AGENT_TOKEN},
    }
    for path, headers in sent.items():
        response = client.post(path, data="{", headers={**headers, "Content-Type": "application/json"})
        assert response.status_code == 400
        assert response.get_json()["error"]["message"].startswith("the request body is not valid JSON: "), path


def test_readme_names_the_admin_commands_and_the_sign_in_settings():
    readme = (ROOT / "README.md").read_text()
    for text in (
        "flask --app app deactivate-admin",
        "waitress-serve --call app:serving_app",
        "`WECHAT_THEME_OVERRIDES`",
        "`PERMANENT_SESSION_LIFETIME`",
        "`LOGIN_MAX_FAILURES`",
        "`LOGIN_FAILURE_WINDOW_SECONDS`",
    ):
        assert text in readme, text


def test_the_rejection_webhook_is_documented_as_it_is_sent(document, app, client, agent_headers):
    """An integrator reading only the document finds the webhook: its body, headers and retry rule."""
    from models.outbox import OutboxMessage
    from models.review import ReviewTask
    from services.review.webhooks import DEFAULT_RETRY_DELAYS, enqueue_rejection
    from tests.helpers.review import article_payload, create_task

    webhook = document["x-webhooks"]["review_task.rejected"]["post"]
    assert {p["name"] for p in webhook["parameters"]} == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert "10 seconds, 30 seconds, 2 minutes" in webhook["description"] and len(DEFAULT_RETRY_DELAYS) == 8
    task = create_task(client, agent_headers, article_payload())
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        row.rejected_elements, row.rejection_reason, row.rejection_note = [], "other", None
        enqueue_rejection(row)
        sent = OutboxMessage.select().order_by(OutboxMessage.id.desc()).first().payload
    schema = webhook["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert list(schema_validator(document, schema).iter_errors(sent)) == []
    sent["data"]["rejectionReason"] = "bored"
    assert list(schema_validator(document, schema).iter_errors(sent))  # the check can fail
    assert "POST /api/auth/login" in document["info"]["description"]


def test_nested_request_objects_keep_their_rules(document):
    """A nullable nested object was `anyOf [any object, the schema]`: a client validating a decision
    against the document accepted unknown fields the server refuses."""
    decision = schema_validator(document, "#/components/schemas/Decision")
    assert list(decision.iter_errors({"action": "approve_without_publish", "selections": {"titel": "x"}}))
    assert list(decision.iter_errors({"action": "approve_without_publish", "bodyDraft": {"foo": 1}}))
    assert not list(decision.iter_errors({"action": "reject_rework", "selections": None, "rejectionReason": "other"}))
    assert '"type": "object", "nullable": true}' not in json.dumps(document)
    # An OpenAPI 3.0 validator reads `nullable` only beside a type: null must still pass there.
    from openapi_schema_validator import OAS30Validator

    body_draft = resolved(document, {"$ref": "#/components/schemas/BodyDraft"})
    oas30 = OAS30Validator(body_draft)
    assert not list(oas30.iter_errors({"markdown": "x", "sourceBodyCandidateId": "a", "themeConfig": None}))
    assert list(oas30.iter_errors({"markdown": "x", "sourceBodyCandidateId": "a", "themeConfig": {"b": 1}}))
    based_on = OAS30Validator(resolved(document, {"$ref": "#/components/schemas/CoverImageOverride"}))
    assert not list(based_on.iter_errors({"basedOn": None, "value": {"assetId": "a"}}))  # the server sends null
    assert list(based_on.iter_errors({"basedOn": 3, "value": {"assetId": "a"}}))


def test_error_codes_are_an_enum_that_names_every_code_the_service_gives():
    import re

    from blueprints.errors import HTTP_CODES
    from services import errors

    used = {code for code, _ in HTTP_CODES.values()} | {
        cls.code for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.ServiceError)
    }
    for path in [*ROOT.glob("services/**/*.py"), *ROOT.glob("blueprints/*.py")]:
        used |= set(re.findall(r'code="([a-z_]+)"', path.read_text()))
        used |= set(re.findall(r'error_response\(\d+, "([a-z_]+)"', path.read_text()))
    assert used <= set(errors.ERROR_CODES), used - set(errors.ERROR_CODES)
    assert {"internal_error", "idempotency_conflict", "publish_in_progress"} <= used


def test_operations_with_more_to_say_describe_it(document):
    patch = document["paths"]["/api/review/agent/tasks/{task_id}/elements"]["patch"]
    assert "material-library" in patch["description"] and "rejectedElements` empty" in patch["description"]
    error_body = document["components"]["schemas"]["ErrorBody"]["properties"]
    assert "field_locked" in error_body["code"]["enum"] and "dotted path" in error_body["details"]["description"]
