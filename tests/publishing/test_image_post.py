"""Image posts become newspic drafts (docs/api.md §5): materials, crop as strings, comment flags 0/1."""

import pytest

from services.publishing.pipeline import coordinate
from tests.helpers.publishing import approved_image_post, events_of, file_bytes, only_draft, publish
from tests.helpers.review import make_asset

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

NEWSPIC_KEYS = {
    "article_type",
    "title",
    "content",
    "image_info",
    "cover_info",
    "need_open_comment",
    "only_fans_can_comment",
}


def test_newspic_draft_holds_exactly_the_platform_fields(app, admin_client, agent_headers, fake):
    # 900x800: a full-height 3:4 box is 600 px wide, so x2 = 0.1 + 2/3 needs rounding to 6 decimals
    images = [make_asset(app, 900, 800), make_asset(app, 300, 400), make_asset(app, 500, 500)]
    crop = {
        "assetId": images[0]["assetId"],
        "cropPercentList": [{"ratio": "3_4", "x1": 0.1, "y1": 0, "x2": 0.1 + 2 / 3, "y2": 1}],
    }
    task = approved_image_post(
        app,
        admin_client,
        agent_headers,
        images,
        coverCrop=crop,
        commentSettings={"needOpenComment": False, "onlyFansCanComment": True},
        description="早上六点的操场\n第二行 <b>不是标签</b>",
    )

    published = publish(admin_client, task).get_json()

    assert published["status"] == "published"
    [job] = published["publishJobs"]
    assert job["status"] == "succeeded" and job["triggerMode"] == "manual"
    [article] = only_draft(fake, job["draftMediaId"])
    assert set(article) == NEWSPIC_KEYS
    assert article["article_type"] == "newspic"
    assert article["title"] == "今天的晨练"
    assert article["content"] == "早上六点的操场\n第二行 <b>不是标签</b>"
    media_ids = [item["image_media_id"] for item in article["image_info"]["image_list"]]
    assert [fake.materials[m]["data"] for m in media_ids] == [file_bytes(app, image) for image in images]
    assert article["cover_info"] == {
        "crop_percent_list": [{"ratio": "3_4", "x1": "0.1", "y1": "0", "x2": "0.766667", "y2": "1"}]
    }
    assert (article["need_open_comment"], article["only_fans_can_comment"]) == (0, 1)
    assert job["snapshot"] == {
        "title": "今天的晨练",
        "description": "早上六点的操场\n第二行 <b>不是标签</b>",
        "images": [{"assetId": image["assetId"], "url": image["url"]} for image in images],
        "coverCrop": crop,
        "commentSettings": {"needOpenComment": False, "onlyFansCanComment": True},
    }
    assert len(events_of(published, "publish_succeeded")) == 1


def test_comment_flags_on_and_open_to_everyone(app, admin_client, agent_headers, fake):
    images = [make_asset(app, 300, 400)]
    task = approved_image_post(app, admin_client, agent_headers, images)

    job = publish(admin_client, task).get_json()["publishJobs"][0]

    [article] = fake.drafts[job["draftMediaId"]]["articles"]
    assert (article["need_open_comment"], article["only_fans_can_comment"]) == (1, 0)
    assert article["cover_info"]["crop_percent_list"] == [{"ratio": "3_4", "x1": "0", "y1": "0", "x2": "1", "y2": "1"}]


def test_coordinates_are_strings_with_at_most_six_decimals():
    assert [coordinate(v) for v in (0, 1, 0.5, 0.125, 1 / 3, 0.9999999, 0.0000004)] == [
        "0",
        "1",
        "0.5",
        "0.125",
        "0.333333",
        "1",
        "0",
    ]
