"""Drafts the platform refuses for the account or the title (docs/api.md §5 "Comments privilege", "Titles"):
88000 to comments on an account without the privilege, 45003 to a title past what the platform takes, each
a lastError that says what to do; WECHAT_<CODE>_COMMENTS=false sends comments off and the page defaults so."""

import re

import pytest

from tests.helpers.app import built_app, signed_in_admin
from tests.helpers.publishing import ACCOUNTS, approved_image_post, platform_settings, publish
from tests.helpers.review import create_task, image_post_payload, make_asset

pytestmark = pytest.mark.both_stores

APPID = ACCOUNTS["carbon-fitness"][0]  # the image posts' account (tests/helpers/review.py)
NO_COMMENTS = (
    "this account cannot open comments: the platform refused comments on (platform error 88000); set "
    "WECHAT_CARBON_FITNESS_COMMENTS=false to send its image posts with comments off, then retry"
)


def failed_job(task):
    assert task["status"] == "approved", task["status"]
    [job] = task["publishJobs"]
    assert job["status"] == "failed"
    return job


def test_88000_fails_the_job_saying_the_account_cannot_open_comments(app, admin_client, agent_headers, fake, store):
    fake.without_comments.add(APPID)  # an account registered after 2018 without the comment privilege
    task = approved_image_post(app, admin_client, agent_headers, [make_asset(app, 300, 400)])

    job = failed_job(publish(admin_client, task).get_json())

    assert job["lastError"] == NO_COMMENTS
    [sent] = fake.requests_to("/draft/add")
    assert sent["json"]["articles"][0]["need_open_comment"] == 1
    assert fake.drafts == {}


def test_comments_false_sends_comments_off_and_the_page_defaults_to_off(make_app, agent_headers, fake, store):
    fake.without_comments.add(APPID)
    with built_app(make_app, **platform_settings(fake, WECHAT_CARBON_FITNESS_COMMENTS="false")) as app:
        admin = signed_in_admin(app)
        pending = create_task(admin, agent_headers, image_post_payload([make_asset(app, 300, 400)]))
        page = admin.get(f"/review/{pending['id']}").get_data(as_text=True)
        assert re.search(r'<input type="checkbox" id="need-open-comment"\s*>', page)  # not checked
        # a decision that still asks for comments is sent with them off: the account cannot open them
        task = approved_image_post(app, admin, agent_headers, [make_asset(app, 300, 400)])
        assert task["selections"]["commentSettings"]["needOpenComment"] is True

        published = publish(admin, task).get_json()

    assert published["status"] == "published", published["publishJobs"]
    [job] = published["publishJobs"]
    [article] = fake.drafts[job["draftMediaId"]]["articles"]
    assert article["need_open_comment"] == 0


def test_the_other_accounts_keep_comments_on_by_default(make_app, agent_headers, fake, store):
    with built_app(make_app, **platform_settings(fake, WECHAT_SILICON_RISE_COMMENTS="false")) as app:
        admin = signed_in_admin(app)
        pending = create_task(admin, agent_headers, image_post_payload([make_asset(app, 300, 400)]))
        page = admin.get(f"/review/{pending['id']}").get_data(as_text=True)
    assert re.search(r'<input type="checkbox" id="need-open-comment"\s*checked>', page)


def test_45003_fails_the_job_naming_the_title_and_the_platforms_limit(app, admin_client, agent_headers, fake, store):
    fake.title_limit = 32  # the platform holding the limit its documents give since 2025-12
    title = "长" * 40  # within the API's 64, so approval takes it
    task = approved_image_post(app, admin_client, agent_headers, [make_asset(app, 300, 400)], title=title)

    job = failed_job(publish(admin_client, task).get_json())

    assert job["lastError"] == (
        f'the platform refused the title "{title}" (40 characters): its documents give a title at most '
        "32 characters (platform error 45003)"
    )
