"""Property-based API fuzzing with schemathesis over /api/openapi.json (issue 9, item 1).

Every documented operation gets 50 generated requests, each sent in-process (WSGI) with all three
credentials at once: the agent token header, the feedback client token header and the admin
session cookie. Each answer must be no server error, carry a documented status code, a documented
Content-Type and a body matching the documented schema.

The app is seeded with real tasks (article, image post, approved with a failed publish job,
rejected for rework), assets, and a feedback with an attachment; path parameters are drawn half
from those real ids and half from schemathesis' own strings (which must give documented 404s).
DELETE draws from its own pool of disposable tasks, so the other operations keep their targets.
Valid bodies are mixed into the generated ones for task creation, feedback creation, element PATCH,
decisions and sign-in, so their success paths (and the duplicates and state conflicts that follow)
are fuzzed too. The documented response headers (ETag, Location, X-Total-Count, ...) are checked
as well.

A second group of tests provokes 303 (sign-in and sign-out), 304, 403, 409, 412, 413, 429, 503 and
an idempotent replay on purpose and validates those answers against the document with the same
checks, since random data seldom reaches them; a last test shows the checks do fail on an
undocumented status and on a body off the schema.
"""

import copy
import io
import tempfile
from pathlib import Path

import hypothesis
import jsonschema_rs
import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import strategies as st
from PIL import Image
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test  # @schema.parametrize()'s own builder
from schemathesis.python._constants.orchestrator import make_constants_value_source
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app import create_app
from models import db
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin
from tests.helpers.feedback import UNLIMITED
from tests.helpers.review import (
    approve_article,
    approve_image_post,
    article_payload,
    create_task,
    decision_url,
    image_post_payload,
    make_asset,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
CLIENT_TOKEN = "client-web-token"
SESSION_COOKIE = "review_admin_session"
FUZZ_SETTINGS = hypothesis.settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],  # fuzz_app only rebinds the database
)


def _config(base, **extra):
    return {
        "TESTING": True,
        # Every fuzzed sign-in comes from the test client's one address: with the real throttle, the
        # first 5 wrong guesses would refuse every later sign-in on this app, the admin's included,
        # and the sign-in answers would depend on the order the operations run in. The throttle's own
        # answer (too_many_attempts) is provoked below on an app that keeps the default.
        "LOGIN_MAX_FAILURES": 10**9,
        "REVIEW_INSTANCE_PATH": str(base / "instance"),
        "REVIEW_UPLOADS_PATH": str(base / "uploads"),
        "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
        "FEEDBACK_CLIENT_TOKENS": f"web={CLIENT_TOKEN},miniprogram=client-mini-token",
        "FEEDBACK_ANONYMOUS_CHANNELS": "miniprogram",
        "WEBHOOK_SENDER_ENABLED": False,
        "TEAM_MESSAGES_ENABLED": False,
        "CHAT_CARDS_ENABLED": False,
        "FEEDBACK_INDEXER_ENABLED": False,
        "WAL_CHECKPOINTER_ENABLED": False,
        **extra,
    }


def _session_cookie(app):
    """Sign in through the real route and return the session cookie's value."""
    create_admin()
    return _signed_in(app)


def _signed_in(app):
    """A new session of the admin; its cookie's value."""
    client = app.test_client()
    response = client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD})
    assert response.status_code == 303 and "error=" not in response.headers["Location"]
    cookie = client.get_cookie(SESSION_COOKIE)
    assert cookie is not None
    return cookie.value


def _png(width, height, color):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def _seed(app, cookie):
    """Real records for the path parameters; returns {parameter name: [values]} pools."""
    agent = {"x-review-agent-token": AGENT_TOKEN}
    admin = app.test_client()
    admin.set_cookie(SESSION_COOKIE, cookie, domain="localhost")
    cover = make_asset(app, 900, 500)
    portrait = [make_asset(app, 600, 800), make_asset(app, 600, 800)]
    library = make_asset(app, 640, 480, scope="library")

    pending = create_task(admin, agent, article_payload([cover["url"]]))
    post = create_task(admin, agent, image_post_payload(portrait))
    approved = create_task(admin, agent, article_payload([cover["url"]], topic="已批准"))
    # No platform credentials are configured: the publish fails at once and leaves a failed job.
    response = admin.post(decision_url(approved), json=approve_article(approved, cover))
    assert response.status_code == 200, response.get_data(as_text=True)
    response = admin.post(f"/api/review/tasks/{approved['id']}/publish-jobs")
    assert response.status_code == 200, response.get_data(as_text=True)
    approved = response.get_json()
    assert approved["publishJobs"] and approved["publishJobs"][0]["status"] == "failed", approved["publishJobs"]
    approved_post = create_task(admin, agent, image_post_payload(portrait, topic="已批准的图文"))
    response = admin.post(decision_url(approved_post), json=approve_image_post(portrait))
    assert response.status_code == 200, response.get_data(as_text=True)
    rework = create_task(admin, agent, article_payload([cover["url"]], topic="返工"))
    response = admin.post(decision_url(rework), json={"action": "reject_rework", "rejectionReason": "other"})
    assert response.status_code == 200, response.get_data(as_text=True)
    disposable = [
        create_task(admin, agent, article_payload([cover["url"]], topic=f"可删除 {n}"))["id"] for n in range(8)
    ]

    client = {"x-feedback-client-token": CLIENT_TOKEN}
    feedback = admin.post(
        "/api/feedbacks",
        headers=client,
        json={
            "type": "bug",
            "title": "闪退",
            "content": "打开首页后闪退",
            "appName": "carbon-fitness",
            "appVersion": "2.3.0",
            "platform": "ios",
        },
    )
    assert feedback.status_code == 201, feedback.get_data(as_text=True)
    feedback_id = feedback.get_json()["id"]
    attachment = admin.post(
        f"/api/feedbacks/{feedback_id}/attachments",
        headers=client,
        data={"kind": "screenshot", "file": (io.BytesIO(_png(40, 30, "red")), "shot.png")},
        content_type="multipart/form-data",
    )
    assert attachment.status_code == 201, attachment.get_data(as_text=True)
    return {
        "task_id": [pending["id"], post["id"], approved["id"], approved_post["id"], rework["id"]],
        "disposable_task_id": disposable,
        "task_job": [(approved["id"], approved["publishJobs"][0]["id"])],
        "asset_id": [cover["assetId"], portrait[0]["assetId"], library["assetId"]],
        "feedback_id": [feedback_id],
        "feedback_attachment": [(feedback_id, attachment.get_json()["id"])],
        "cover_urls": [cover["url"]],
        "file": [tuple(asset["url"].split("/")[2:]) for asset in (cover, library)],  # /uploads/<scope>/<name>
    }


def _real_parameters(pools, method, path_parameters):
    """Every combination of real ids fitting this operation's path parameters."""
    names = set(path_parameters or ())
    if names == {"task_id", "job_id"}:
        return [{"task_id": t, "job_id": j} for t, j in pools["task_job"]]
    if names == {"scope", "name"}:
        return [{"scope": scope, "name": name} for scope, name in pools["file"]]
    if names == {"feedback_id", "attachment_id"}:
        return [{"feedback_id": f, "attachment_id": a} for f, a in pools["feedback_attachment"]]
    if names == {"task_id"}:
        return [{"task_id": t} for t in pools["disposable_task_id" if method == "DELETE" else "task_id"]]
    if len(names) == 1:
        (name,) = names
        return [{name: value} for value in pools.get(name, [])]
    return []


def _document():
    """The OpenAPI document of an app on throw-away folders, read once when this module is collected."""
    with tempfile.TemporaryDirectory(prefix="fuzz-doc-") as folder:
        app = create_app(_config(Path(folder)), serve=True)
        document = app.test_client().get("/api/openapi.json").get_json()
        if not db.is_closed():
            db.close()
    return document


ATTACHMENT_DOWNLOAD = "/api/feedbacks/{feedback_id}/attachments/{attachment_id}"


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


# Parametrized per operation at collection time (schemathesis' lazy `from_fixture` loader does not
# run on pytest 9.2, which renamed the node attribute it rewrites); each operation's cases are built when
# its test runs (test_operation_conforms_to_the_document); the calls go to `fuzz_app`.
DOCUMENT = _document()
schema = schemathesis.openapi.from_dict(DOCUMENT)
# Credentials are sent on every call by the test itself; schemathesis must not drop them to probe 401s.
schema.config.generation.update(with_security_parameters=False)
POOLS = {}  # filled by the fuzz_app fixture; read when hypothesis draws path parameters


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    real = _real_parameters(POOLS, context.operation.method.upper(), path_parameters)
    if not real:
        return st.just(path_parameters)
    return st.one_of(st.just(path_parameters), st.sampled_from(real))


SHORT_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)


def _valid_bodies(method, path):
    """Strategies of valid bodies for operations random data seldom gets right, mixed in with the
    generated ones so the success paths (201/200, duplicates, state conflicts) are fuzzed too."""
    if (method, path) == ("POST", "/api/review/agent/tasks"):
        return SHORT_TEXT.filter(str.strip).map(lambda topic: article_payload(POOLS["cover_urls"], topic=topic))
    if (method, path) == ("POST", "/api/feedbacks"):
        return st.fixed_dictionaries(
            {
                "type": st.sampled_from(["bug", "suggestion", "other"]),
                "title": SHORT_TEXT.filter(str.strip),
                "content": st.sampled_from(["打开首页后闪退", "登录失败", "图片加载慢"]),
                "appName": st.just("carbon-fitness"),
                "appVersion": st.sampled_from(["2.3.0", "2.4.0"]),
                "platform": st.sampled_from(["ios", "android"]),
            }
        )
    if (method, path) == ("PATCH", "/api/review/agent/tasks/{task_id}/elements"):
        return st.one_of(
            st.fixed_dictionaries({"title": SHORT_TEXT.filter(str.strip)}),
            st.fixed_dictionaries({"summary": SHORT_TEXT.filter(str.strip)}),
        )
    if (method, path) == ("POST", "/api/auth/login"):  # JSON or form fields alike
        return st.fixed_dictionaries(
            {
                "username": st.just("admin"),
                "password": st.just(ADMIN_PASSWORD),
                "next": st.sampled_from(
                    ["/review", "/feedback?status=all", "//elsewhere.example", "https://elsewhere.example/"]
                ),
            }
        )
    if (method, path) == ("POST", "/api/review/tasks/{task_id}/decision"):
        return st.fixed_dictionaries(
            {
                "action": st.just("reject_rework"),
                "rejectionReason": st.sampled_from(["other", "style_mismatch"]),
                "rejectionNote": SHORT_TEXT,
            }
        )
    return None


@schema.hook
def flatmap_body(context, body):
    valid = _valid_bodies(context.operation.method.upper(), context.operation.path)
    if valid is None or not isinstance(body, dict):
        return st.just(body)
    return st.one_of(st.just(body), valid)


@pytest.fixture(scope="module")
def fuzz_state(tmp_path_factory):
    app = create_app(_config(tmp_path_factory.mktemp("fuzz"), **UNLIMITED), serve=True)
    database = db.obj
    cookie = _session_cookie(app)
    POOLS.update(_seed(app, cookie))
    yield app, database, cookie
    POOLS.clear()
    if not db.is_closed():
        db.close()


@pytest.fixture
def fuzz_app(fuzz_state):
    """The seeded app, with the database proxy bound to its file again (other apps rebind it)."""
    app, database, _cookie = fuzz_state
    db.initialize(database)
    yield app
    if not db.is_closed():
        db.close()


def credentials(fuzz_state):
    headers = {"x-review-agent-token": AGENT_TOKEN, "x-feedback-client-token": CLIENT_TOKEN}
    return headers, {SESSION_COOKIE: fuzz_state[2]}


def _conforms(case, fuzz_app, fuzz_state):
    headers, cookies = credentials(fuzz_state)
    if case.operation.path == "/api/auth/logout":  # it ends the session it is sent with: not the shared one
        cookies = {SESSION_COOKIE: _signed_in(fuzz_app)}
    case.call_and_validate(app=fuzz_app, headers=headers, cookies=cookies, checks=CHECKS)


@pytest.mark.parametrize("label", [operation.ok().label for operation in schema.get_all_operations()])
def test_operation_conforms_to_the_document(label, fuzz_app, fuzz_state):
    """The operation's examples, coverage cases (boundaries, wrong types, missing fields) and 50 generated
    requests, built as `@schema.parametrize()` builds them, but here, when the test runs: built at
    collection, they cost each xdist worker ~12 s before its first test, for a module only one worker runs."""
    fuzz = build_operation_test(
        config=schema.config,
        operation=schema.find_operation_by_label(label),
        test_func=_conforms,
        given_kwargs={},
        feedback=FeedbackSources(constants_value_source=make_constants_value_source(schema)),
        explicit_settings=FUZZ_SETTINGS,
    )
    fuzz(fuzz_app=fuzz_app, fuzz_state=fuzz_state)


def test_every_operation_is_fuzzed(fuzz_app, fuzz_state):
    """The fuzzing above reaches every JSON route of the API (none silently missing from the document),
    and its admin session lasted to the end (a fuzzed sign-out used a session of its own)."""
    signed_in = fuzz_app.test_client()
    signed_in.set_cookie(SESSION_COOKIE, fuzz_state[2], domain="localhost")
    assert signed_in.get("/api/review/tasks").status_code == 200
    document = fuzz_app.test_client().get("/api/openapi.json").get_json()
    operations = {
        (method.upper(), path) for path, ops in document["paths"].items() for method in ops if method != "parameters"
    }  # the path's own parameters
    expected = {
        ("POST", "/api/review/agent/tasks"),
        ("GET", "/api/review/agent/tasks"),
        ("GET", "/api/review/agent/tasks/{task_id}"),
        ("PATCH", "/api/review/agent/tasks/{task_id}/elements"),
        ("GET", "/api/review/tasks"),
        ("GET", "/api/review/tasks/{task_id}"),
        ("DELETE", "/api/review/tasks/{task_id}"),
        ("POST", "/api/review/tasks/{task_id}/decision"),
        ("GET", "/api/review/tasks/{task_id}/package"),
        ("POST", "/api/review/tasks/{task_id}/publish-jobs"),
        ("POST", "/api/review/tasks/{task_id}/publish-jobs/{job_id}/retry"),
        ("GET", "/api/review/tasks/{task_id}/publish-progress"),
        ("POST", "/api/review/tasks/{task_id}/preview"),
        ("POST", "/api/review/tasks/{task_id}/presence"),
        ("POST", "/api/assets/upload"),
        ("GET", "/api/assets"),
        ("POST", "/api/feedbacks"),
        ("GET", "/api/feedbacks"),
        ("GET", "/api/feedbacks/{feedback_id}"),
        ("PATCH", "/api/feedbacks/{feedback_id}/status"),
        ("POST", "/api/feedbacks/{feedback_id}/attachments"),
        ("GET", "/api/feedbacks/{feedback_id}/attachments/{attachment_id}"),
        ("POST", "/api/auth/login"),
        ("GET", "/api/auth/logout"),
        ("POST", "/api/auth/logout"),
        ("GET", "/healthz"),
        ("GET", "/metrics"),
        ("GET", "/uploads/{scope}/{name}"),
    }
    assert expected <= operations, sorted(expected - operations)
    # The sign-in/out redirects, the health check, the metrics and the file route document only the errors
    # they can give.
    narrowed = {"/api/auth/login", "/api/auth/logout", "/healthz", "/metrics", "/uploads/{scope}/{name}"}
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            if path not in narrowed and method != "parameters":
                assert {"400", "401", "403", "404", "405", "409", "412", "413", "429", "500"} <= set(op["responses"]), (
                    method,
                    path,
                )


# ---- statuses random data seldom reaches, provoked on purpose and checked the same way ----------
@pytest.fixture
def provoked(make_app):
    """(app, call): a fresh app whose per-device feedback limit is 1/minute; `call` sends one request
    through schemathesis with every credential and validates the answer against the document."""
    app = make_app(**{**UNLIMITED, "FEEDBACK_RATE_LIMIT_PER_DEVICE": "1/minute"})
    cookie = _session_cookie(app)

    def call(method, path, expected, *, path_parameters=None, body=None, headers=None, media_type=None, checks=CHECKS):
        operation = schema[path][method]
        payload = {} if body is None else {"body": body, "media_type": media_type or "application/json"}
        case = operation.Case(path_parameters=path_parameters or {}, **payload)
        sent = {"x-review-agent-token": AGENT_TOKEN, "x-feedback-client-token": CLIENT_TOKEN, **(headers or {})}
        response = case.call(app=app, headers=sent, cookies={SESSION_COOKIE: cookie})
        assert response.status_code == expected, (response.status_code, response.text[:300])
        case.validate_response(response, checks=checks)
        return response

    yield app, call
    if not db.is_closed():
        db.close()


def _feedback(**extra):
    return {
        "type": "bug",
        "title": "闪退",
        "content": "打开首页后闪退",
        "appName": "carbon-fitness",
        "appVersion": "2.3.0",
        "platform": "ios",
        **extra,
    }


def test_409_duplicate_feedback_and_429_rate_limited_are_documented(provoked):
    _app, call = provoked
    call("POST", "/api/feedbacks", 201, body=_feedback(userId="user-1", deviceId="device-a"))
    limited = call("POST", "/api/feedbacks", 429, body=_feedback(deviceId="device-a", content="另一条"))
    assert limited.headers["retry-after"][0].isdigit()
    # Same fingerprint (the userId decides it) from a device that is still under its limit.
    duplicate = call("POST", "/api/feedbacks", 409, body=_feedback(userId="user-1", deviceId="device-b"))
    assert duplicate.json()["error"]["code"] == "duplicate_feedback"


def test_409_invalid_state_idempotency_conflict_and_412_are_documented(provoked):
    app, call = provoked
    cover = make_asset(app, 900, 500)
    created = call(
        "POST",
        "/api/review/agent/tasks",
        201,
        body=article_payload([cover["url"]]),
        headers={"Idempotency-Key": "key-1"},
    ).json()
    replayed = call(
        "POST",
        "/api/review/agent/tasks",
        201,
        body=article_payload([cover["url"]]),
        headers={"Idempotency-Key": "key-1"},
    )
    assert replayed.headers["idempotent-replayed"] == ["true"] and replayed.json()["id"] == created["id"]
    conflict = call(
        "POST",
        "/api/review/agent/tasks",
        409,
        body=article_payload([cover["url"]], topic="别的"),
        headers={"Idempotency-Key": "key-1"},
    )
    assert conflict.json()["error"]["code"] == "idempotency_conflict"
    stale = call(
        "PATCH",
        "/api/review/agent/tasks/{task_id}/elements",
        412,
        path_parameters={"task_id": created["id"]},
        body={"title": "新标题"},
        headers={"If-Match": f'"{created["version"] + 5}"'},
    )
    assert stale.json()["error"]["code"] == "precondition_failed"
    call(
        "POST",
        "/api/review/tasks/{task_id}/decision",
        200,
        path_parameters={"task_id": created["id"]},
        body=approve_article(created, cover),
    )
    again = call(
        "POST",
        "/api/review/tasks/{task_id}/decision",
        409,
        path_parameters={"task_id": created["id"]},
        body=approve_article(created, cover),
    )
    assert again.json()["error"]["code"] == "invalid_state"


def test_413_payload_too_large_is_documented(provoked):
    _app, call = provoked
    huge = article_payload(topic="大")
    huge["candidates"]["bodyOptions"][0]["content"] = "长" * (1024 * 1024)  # 3 MiB of UTF-8, over the 2 MiB limit
    call("POST", "/api/review/agent/tasks", 413, body=huge)
    call("POST", "/api/feedbacks", 413, body=_feedback(logText="x" * 300_000))


def test_sign_in_and_out_redirects_are_documented(provoked):
    _app, call = provoked
    form = "application/x-www-form-urlencoded"
    signed_in = call(
        "POST",
        "/api/auth/login",
        303,
        media_type=form,
        body={"username": "admin", "password": ADMIN_PASSWORD, "next": "/feedback"},
    )
    assert signed_in.headers["location"] == ["/feedback"]
    signed_in = call("POST", "/api/auth/login", 303, body={"username": "admin", "password": ADMIN_PASSWORD})
    assert signed_in.headers["location"] == ["/review"]
    for _attempt in range(5):  # LOGIN_MAX_FAILURES keeps its default here
        wrong = call("POST", "/api/auth/login", 303, media_type=form, body={"username": "admin", "password": "wrong"})
        assert wrong.headers["location"] == ["/login?error=invalid_credentials"]
    throttled = call("POST", "/api/auth/login", 303, body={"username": "admin", "password": ADMIN_PASSWORD})
    assert throttled.headers["location"] == ["/login?error=too_many_attempts"]
    refused = call("POST", "/api/auth/logout", 403, headers={"Origin": "https://elsewhere.example"})
    assert refused.json()["error"]["code"] == "forbidden"
    for method in ("GET", "POST"):
        assert call(method, "/api/auth/logout", 303).headers["location"] == ["/login"]


def test_health_503_is_documented(provoked):
    _app, call = provoked
    assert call("GET", "/healthz", 200).json() == {"status": "ok"}
    database = Path(db.obj.database)
    database.rename(database.with_name("moved-away.db"))
    try:
        # A documented 503 all the same: every check but "no server error".
        unavailable = call("GET", "/healthz", 503, checks=CHECKS[1:])
        assert unavailable.json() == {"status": "unavailable"}
    finally:
        database.with_name("moved-away.db").rename(database)


# ---- the document itself ----------------------------------------------------------------------
def test_every_documented_pattern_is_an_ecma_regex():
    """A Python-only regex (inline flags such as (?s), named groups (?P<..>)) makes the document
    unusable for JSON Schema tools: schemathesis refuses to load the operation at all."""
    checker = jsonschema_rs.Draft202012Validator({"format": "regex"}, validate_formats=True)
    invalid = sorted(
        {
            node["pattern"]
            for node in _walk(DOCUMENT)
            if isinstance(node.get("pattern"), str) and not checker.is_valid(node["pattern"])
        }
    )
    assert invalid == []


def test_attachment_download_documents_its_content_type(fuzz_app, fuzz_state):
    """A screenshot is sent as image/png, which the document must list (it once listed only
    application/octet-stream)."""
    feedback_id, attachment_id = POOLS["feedback_attachment"][0]
    case = schema[ATTACHMENT_DOWNLOAD]["GET"].Case(
        path_parameters={"feedback_id": feedback_id, "attachment_id": attachment_id}
    )
    headers, cookies = credentials(fuzz_state)
    response = case.call(app=fuzz_app, headers=headers, cookies=cookies)
    assert response.status_code == 200
    assert response.headers["content-type"][0].startswith("image/png")
    case.validate_response(response, checks=[content_type_conformance])


def test_a_file_the_client_holds_is_a_documented_304(fuzz_app, fuzz_state):
    scope, name = POOLS["file"][0]
    operation = schema["/uploads/{scope}/{name}"]["GET"]
    headers, cookies = credentials(fuzz_state)
    first = operation.Case(path_parameters={"scope": scope, "name": name}).call(
        app=fuzz_app, headers=headers, cookies=cookies
    )
    assert first.status_code == 200
    case = operation.Case(path_parameters={"scope": scope, "name": name})
    response = case.call(app=fuzz_app, headers={**headers, "If-None-Match": first.headers["etag"][0]}, cookies=cookies)
    assert response.status_code == 304
    case.validate_response(response, checks=CHECKS)


def test_the_checks_catch_an_undocumented_status_and_a_body_off_the_schema(fuzz_app, fuzz_state):
    """The fuzzing above can fail: the same checks refuse a 404 the document does not list, and a
    body missing a property, or an answer missing a header, the document requires."""
    document = copy.deepcopy(DOCUMENT)
    detail = document["paths"]["/api/review/tasks/{task_id}"]["get"]["responses"]
    del detail["404"]
    document["components"]["schemas"]["Task"]["required"].append("notSentByTheServer")
    detail["200"]["headers"]["X-Not-Sent"] = {"required": True, "schema": {"type": "string"}}
    strict = schemathesis.openapi.from_dict(document)
    headers, cookies = credentials(fuzz_state)
    for task_id, failures in (
        ("no-such-task", ["UndefinedStatusCode"]),
        (POOLS["task_id"][0], ["JsonSchemaError", "MissingHeaders"]),
    ):
        case = strict["/api/review/tasks/{task_id}"]["GET"].Case(path_parameters={"task_id": task_id})
        response = case.call(app=fuzz_app, headers=headers, cookies=cookies)
        with pytest.raises(FailureGroup) as raised:
            case.validate_response(response, checks=CHECKS)
        assert sorted(type(e).__name__ for e in raised.value.exceptions) == failures
