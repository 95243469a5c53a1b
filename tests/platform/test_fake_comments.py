"""The fake platform's comment API (fakeplatform/comments.py) driven over real HTTP by the service's client
(services/platform/client.py, docs/api.md §5 "Documents, samples and this service"): paging under 50, each
action, refusals, a send it never made."""

import json

import pytest
import requests

from fakeplatform import FakePlatform
from models.base import db, init_database
from models.platform import PlatformToken, PlatformUpload
from services.platform.client import PlatformClient, PlatformError
from tests.helpers.review import png_bytes
from tests.helpers.waiting import wait_until

APPID, SECRET = "wx-silicon-rise", "secret-silicon-rise-0123456789"
OTHER_APPID, OTHER_SECRET = "wx-carbon-fitness", "secret-carbon-fitness-0123456789"


@pytest.fixture
def fake():
    platform = FakePlatform({APPID: SECRET, OTHER_APPID: OTHER_SECRET})
    platform.publish_seconds = 0.05
    platform.start()
    yield platform
    platform.stop()


@pytest.fixture
def client(fake, tmp_path):
    init_database(sqlite_path=str(tmp_path / "t.db"))
    db.create_tables([PlatformToken, PlatformUpload])
    yield PlatformClient("silicon-rise", APPID, SECRET, fake.base_url, timeout=(2, 10))
    db.close()


def article(fake, title="t"):
    return {
        "title": title,
        "content": "<p>c</p>",
        "thumb_media_id": fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"],
    }


def published(fake, client) -> str:
    """The msg_data_id of an article the fake really published."""
    submitted = client.submit_publish(client.add_draft([article(fake)]))
    wait_until(lambda: client.publish_status(submitted["publish_id"])["publish_status"] == 0, 15, "never published")
    return submitted["msg_data_id"]


def every_page(client, msg_data_id, index=0, count=49, type_=0):
    pages, begin = [], 0
    while True:
        page = client.list_comments(msg_data_id, index, begin, count, type_)
        pages.append(page)
        begin += len(page["comment"])
        if not page["comment"] or begin >= page["total"]:
            return pages


def refused(call) -> int:
    with pytest.raises(PlatformError) as failed:
        call()
    return failed.value.errcode


def test_120_comments_come_in_three_pages_of_49_newest_first(fake, client):
    msg_data_id = published(fake, client)
    ids = fake.add_comments(msg_data_id, 0, 120)
    pages = every_page(client, msg_data_id)
    assert [len(p["comment"]) for p in pages] == [49, 49, 22]
    assert {p["total"] for p in pages} == {120}
    listed = [c["user_comment_id"] for p in pages for c in p["comment"]]
    assert listed == list(reversed(ids))  # newest first, each once
    first = pages[0]["comment"][0]
    assert set(first) == {"user_comment_id", "openid", "create_time", "content", "comment_type"}
    assert first["content"] == "读者留言 120" and first["comment_type"] == 0
    bodies = [r["json"] for r in fake.requests_to("comment/list")]
    assert [b["begin"] for b in bodies] == [0, 49, 98]
    assert {(b["count"], b["type"], b["index"], b["msg_data_id"]) for b in bodies} == {(49, 0, 0, int(msg_data_id))}


def test_a_count_of_50_is_refused_by_the_client_before_sending_and_by_the_fake(fake, client):
    msg_data_id = published(fake, client)
    for count in (50, 51, 0):
        with pytest.raises(ValueError):
            client.list_comments(msg_data_id, 0, 0, count)
    assert fake.requests_to("comment/list") == []
    raw = requests.post(
        f"{fake.base_url}/cgi-bin/comment/list",
        params={"access_token": client.access_token()},
        data=json.dumps({"msg_data_id": int(msg_data_id), "index": 0, "begin": 0, "count": 50, "type": 0}),
        timeout=10,
    ).json()
    assert raw["errcode"] == 88010 and raw["errmsg"].startswith("count range error")


def test_each_action_changes_what_the_list_shows(fake, client):
    msg_data_id = published(fake, client)
    first, second, third = fake.add_comments(msg_data_id, 0, 3)

    def shown(type_=0):
        return {c["user_comment_id"]: c for c in client.list_comments(msg_data_id, 0, 0, 49, type_)["comment"]}

    assert fake.comments_open(msg_data_id, 0) is False  # the draft's need_open_comment 0
    client.open_comments(msg_data_id, 0)
    assert fake.comments_open(msg_data_id, 0) is True
    client.close_comments(msg_data_id, 0)
    assert fake.comments_open(msg_data_id, 0) is False

    client.mark_elect(msg_data_id, 0, second)
    assert shown()[second]["comment_type"] == 1
    assert list(shown(2)) == [second] and list(shown(1)) == [third, first]
    client.unmark_elect(msg_data_id, 0, second)
    assert shown(2) == {} and shown()[second]["comment_type"] == 0

    client.reply_comment(msg_data_id, 0, first, "谢谢你的留言")
    reply = shown()[first]["reply"]
    assert reply["content"] == "谢谢你的留言" and isinstance(reply["create_time"], int)
    assert refused(lambda: client.reply_comment(msg_data_id, 0, first, "再一次")) == 88005  # one reply a comment
    client.delete_reply(msg_data_id, 0, first)
    assert "reply" not in shown()[first]
    assert refused(lambda: client.delete_reply(msg_data_id, 0, first)) == 88009
    assert refused(lambda: client.reply_comment(msg_data_id, 0, first, "")) == 88007

    client.delete_comment(msg_data_id, 0, third)
    assert list(shown()) == [second, first]
    assert client.list_comments(msg_data_id, 0, 0, 49)["total"] == 2
    assert refused(lambda: client.mark_elect(msg_data_id, 0, third)) == 88008
    fake.remove_comment(msg_data_id, 0, second)  # the reader deleted it
    assert list(shown()) == [first]
    assert refused(lambda: client.mark_elect(msg_data_id, 0, second)) == 88004
    assert refused(lambda: client.delete_comment(msg_data_id, 0, 999)) == 88008


def test_a_mass_sends_articles_have_their_own_comments_by_index_from_0(fake, client):
    sent = client.mass_send(client.add_draft([article(fake, "a"), article(fake, "b")]), "e-1", None, False)
    wait_until(lambda: client.mass_status(sent["msg_id"]) == "SEND_SUCCESS", 15, "the send never finished")
    msg_data_id = sent["msg_data_id"]
    fake.add_comment(msg_data_id, 1, "第二篇的留言", openid="oReaderB")
    assert client.list_comments(msg_data_id, 0, 0, 10)["total"] == 0
    [only] = client.list_comments(msg_data_id, 1, 0, 10)["comment"]
    assert (only["content"], only["openid"]) == ("第二篇的留言", "oReaderB")
    assert refused(lambda: client.list_comments(msg_data_id, 2, 0, 10)) == 88001  # a third article there is not
    with pytest.raises(ValueError):
        fake.add_comment(msg_data_id, 2, "x")


def test_a_send_the_fake_never_made_or_anothers_is_88001(fake, client):
    assert refused(lambda: client.list_comments("2650000999", 0, 0, 10)) == 88001
    assert refused(lambda: client.open_comments("2650000999", 0)) == 88001
    other = PlatformClient("carbon-fitness", OTHER_APPID, OTHER_SECRET, fake.base_url, timeout=(2, 10))
    mine = published(fake, client)
    assert refused(lambda: other.list_comments(mine, 0, 0, 10)) == 88001
    with pytest.raises(ValueError):
        fake.add_comment("2650000999", 0, "x")


def test_told_failures_and_an_account_without_the_privilege(fake, client):
    msg_data_id = published(fake, client)
    comment_id = fake.add_comment(msg_data_id, 0, "留言")
    fake.comments_fail_next(88002, times=2)
    assert refused(lambda: client.open_comments(msg_data_id, 0)) == 88002
    assert refused(lambda: client.reply_comment(msg_data_id, 0, comment_id, "回复")) == 88002
    assert fake.comments_open(msg_data_id, 0) is False  # nothing changed
    assert "reply" not in client.list_comments(msg_data_id, 0, 0, 10)["comment"][0]
    fake.comments_fail_next(-1)
    with pytest.raises(PlatformError) as failed:
        client.list_comments(msg_data_id, 0, 0, 10)
    assert (failed.value.errcode, failed.value.errmsg) == (-1, "system error")
    fake.without_comments.add(APPID)
    assert refused(lambda: client.list_comments(msg_data_id, 0, 0, 10)) == 88000
    assert refused(lambda: client.mark_elect(msg_data_id, 0, comment_id)) == 88000
