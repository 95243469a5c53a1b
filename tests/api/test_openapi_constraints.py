"""Rules the validators enforce on single fields are stated in the OpenAPI document (docs/api.md §16):
each value below is refused by the service and invalid by the document too (was valid by it)."""

import re

import pytest
from openapi_schema_validator import OAS30Validator

from tests.helpers.review import article_payload


@pytest.fixture
def document(client):
    return client.get("/api/openapi.json").get_json()


def valid(document, component, instance):
    """Whether `instance` is valid by the document's component schema (its $refs resolved in the document)."""
    schema = {**document["components"]["schemas"][component], "components": document["components"]}
    return OAS30Validator(schema).is_valid(instance)


def test_a_blank_topic_is_invalid_by_the_document(document):
    assert valid(document, "CreateTask", article_payload())
    assert not valid(document, "CreateTask", article_payload(topic=""))
    assert not valid(document, "CreateTask", article_payload(topic="   "))


def test_an_empty_cover_image_reference_is_invalid_by_the_document(document):
    selections = {"title": "标题", "coverImage": "https://example.com/a.png"}
    properties = document["components"]["schemas"]["Selections"]["properties"]
    assert OAS30Validator({"components": document["components"], **properties["coverImage"]}).is_valid(
        selections["coverImage"]
    )
    for empty in ("", {"assetId": ""}):
        assert not OAS30Validator({"components": document["components"], **properties["coverImage"]}).is_valid(empty)


@pytest.mark.parametrize("box", [{"x1": 1, "x2": 1}, {"x1": 0, "x2": 0}])
def test_a_crop_with_x2_not_above_x1_at_the_edges_is_invalid_by_the_document(document, box):
    crop = {"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}
    assert valid(document, "CropPercent", crop)
    assert not valid(document, "CropPercent", {**crop, **box})


@pytest.mark.parametrize("body", [{}, {"wechatName": "alice", "openId": "oAbC"}])
def test_the_preview_takes_exactly_one_recipient_by_the_document(document, body):
    assert valid(document, "PhonePreview", {"wechatName": "alice"})
    assert valid(document, "PhonePreview", {"openId": "oAbC123"})
    assert not valid(document, "PhonePreview", body)


@pytest.mark.parametrize("name", ["al\nice", "\u202eecila\u0000", "a b"])
def test_recipient_ids_keep_to_the_platforms_characters_by_the_document(document, name):
    assert not valid(document, "PhonePreview", {"wechatName": name})
    assert not valid(document, "PhonePreview", {"openId": name})


def test_the_if_match_format_is_stated(document):
    pattern = document["components"]["parameters"]["If-Match"]["schema"]["pattern"]
    for good in ('"3"', "3", 'W/"3"', '"1", "2"', "*"):
        assert re.search(pattern, good), good
    for bad in ("x", "3,", '"abc"', "1;2"):
        assert not re.search(pattern, bad), bad


@pytest.mark.parametrize("value", ["x", "3,", '"abc"'])
def test_what_the_if_match_pattern_refuses_the_service_refuses(app, admin_client, agent_headers, article, value):
    task, _ = article
    response = admin_client.post(
        f"/api/review/tasks/{task['id']}/decision",
        headers={"If-Match": value},
        json={"action": "reject_rework", "rejectionReason": "other"},
    )
    assert response.status_code == 400, response.get_json()
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["status"] == "pending_review"
