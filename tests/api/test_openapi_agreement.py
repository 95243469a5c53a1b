"""The OpenAPI document says exactly what the service accepts (issue 20): requests generated from the
document's own constraints, each checked both ways — a value the document allows is not refused, a
value it forbids is 400 naming that parameter. Plus the rules JSON Schema cannot say (`x-greater-than`)
and the methods a path documents against the `Allow` the service sends."""

import pytest

from tests.helpers.app import assert_error
from tests.helpers.review import create_task, decision_url, image_post_payload, make_asset

LIST_ROUTES = (
    "/api/assets",
    "/api/feedbacks",
    "/api/feedbacks/export.csv",
    "/api/review/agent/tasks",
    "/api/review/tasks",
)
VALID_FORMATS = {"date or date-time": ("2026-01-02", "2026-01-02T03:04:05Z")}


@pytest.fixture
def document(client):
    return client.get("/api/openapi.json").get_json()


def cases(parameter):
    """(value, allowed) pairs that exercise each constraint the document gives the parameter."""
    schema, name = parameter["schema"], parameter["name"]
    found = []
    if parameter.get("allowEmptyValue"):
        found.append(("", True))
    if "enum" in schema:
        found += [(str(value), True) for value in schema["enum"] if value is not None]
        found.append(("not-one-of-them", False))
    if schema.get("type") == "integer":
        found.append(("abc", False))
        if "minimum" in schema:
            found += [(str(schema["minimum"]), True), (str(schema["minimum"] - 1), False)]
        if "maximum" in schema:
            found += [(str(schema["maximum"]), True), (str(schema["maximum"] + 1), False)]
    if schema.get("format") in VALID_FORMATS:
        found += [(value, True) for value in VALID_FORMATS[schema["format"]]] + [("not-a-date", False)]
    if schema.get("type") == "string" and "maxLength" in schema:
        if name != "cursor" and "format" not in schema:  # a cursor only ever comes from a Link header
            found.append(("a" * schema["maxLength"], True))
        found.append(("a" * (schema["maxLength"] + 1), False))
    if schema.get("type") == "string" and schema.get("minLength", 0) > 1:
        found.append(("a" * (schema["minLength"] - 1), False))
    if "pattern" in schema:
        found += [("plain words", True), ("with a \x01 control character", False)]
    return found


def query_parameters(document, path):
    return [p for p in document["paths"][path]["get"]["parameters"] if isinstance(p, dict) and p.get("in") == "query"]


@pytest.mark.parametrize("path", LIST_ROUTES)
def test_every_documented_query_constraint_holds_both_ways(app, admin_client, agent_headers, document, path):
    headers = agent_headers if "/agent/" in path else {}
    parameters = query_parameters(document, path)
    assert parameters and all(p.get("allowEmptyValue") for p in parameters)
    checked = 0
    for parameter in parameters:
        for value, allowed in cases(parameter):
            response = admin_client.get(path, query_string={parameter["name"]: value}, headers=headers)
            response.get_data()  # the CSV export streams: read it to the end
            response.close()
            where = (parameter["name"], value[:40], response.status_code)
            if allowed:
                assert response.status_code == 200, (where, response.get_data(as_text=True)[:300])
            else:
                error = assert_error(response, 400, "validation_error")
                assert parameter["name"] in error["details"], (where, error)
            checked += 1
    assert checked >= 2 * len(parameters)  # every parameter was tried at least twice


def test_the_crop_order_the_document_states_holds_both_ways(app, admin_client, agent_headers, document):
    crop = document["components"]["schemas"]["CropPercent"]["properties"]
    rules = {name: spec["x-greater-than"] for name, spec in crop.items() if "x-greater-than" in spec}
    assert rules == {"x2": "x1", "y2": "y1"}
    images = [make_asset(app, 600, 800) for _ in range(2)]
    task = create_task(admin_client, agent_headers, image_post_payload(images))
    for larger, smaller in rules.items():
        box = {"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}
        box[smaller], box[larger] = 0.5, 0.5  # equal: not greater
        decision = {
            "action": "approve_without_publish",
            "selections": {
                "title": "t",
                "description": "d",
                "images": [{"assetId": a["assetId"]} for a in images],
                "coverCrop": {"assetId": images[0]["assetId"], "cropPercentList": [box]},
                "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
            },
        }
        error = assert_error(admin_client.post(decision_url(task), json=decision), 400, "validation_error")
        assert f"selections.coverCrop.cropPercentList.0.{larger}" in error["details"]


def test_allow_names_exactly_the_documented_methods(app, admin_client, document):
    """A 405's Allow lists what the document documents for that path (the upload path listed GET)."""
    for path, operations in document["paths"].items():
        if "{" in path:
            continue
        documented = {method.upper() for method in operations}
        unused = next(m for m in ("PUT", "DELETE", "PATCH", "POST") if m not in documented)
        response = admin_client.open(path, method=unused)
        if response.status_code != 405:
            continue  # a catch-all 404 page path, or a method the app answers itself
        allowed = {m.strip() for m in response.headers["Allow"].split(",")} - {"HEAD", "OPTIONS"}
        assert allowed == documented, (path, allowed, documented)
    upload = admin_client.get("/api/assets/upload")
    assert upload.status_code == 405 and {m.strip() for m in upload.headers["Allow"].split(",")} == {"POST", "OPTIONS"}
