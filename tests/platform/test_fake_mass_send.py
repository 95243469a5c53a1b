"""The fake platform's mass send over real HTTP: message/mass/sendall (once per clientmsgid, the day's quota,
forced answers, a late or held answer), message/mass/get, tags/get, the MASSSENDJOBFINISH push in each mode, the
readers' figures of each sent article, and the fake standing alone."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import requests
from werkzeug.wrappers import Request, Response

from fakeplatform.freepublish import beijing_day, encoding_aes_key, sha1_sorted
from fakeplatform.masssend import mass_event_xml
from fakeplatform.threaded import Served
from services.platform.pushes import decrypt
from tests.helpers.publishing import ACCOUNTS
from tests.helpers.served import listening
from tests.helpers.waiting import wait_until

APPID, SECRET = ACCOUNTS["silicon-rise"]
OTHER_APPID, OTHER_SECRET = ACCOUNTS["carbon-fitness"]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)  # the fake tells an image by its first bytes
TOKEN = "mass-event-token"
TO_ALL = {"is_to_all": True}


class EventReceiver:
    """A server URL on 127.0.0.1 that keeps each push: (path, query, body)."""

    def __init__(self):
        self.received = []
        self.arrived = threading.Condition()
        self._served = Served(self._app)
        self.url = f"{self._served.url}/wechat/silicon-rise/events"

    @Request.application
    def _app(self, request):
        with self.arrived:
            self.received.append((request.path, request.args.to_dict(), request.get_data()))
            self.arrived.notify_all()
        return Response("success", content_type="text/plain")

    def wait_for(self, count, timeout=10):
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.received) >= count, timeout), self.received
        return self.received[count - 1]

    def stop(self):
        self._served.stop()


@pytest.fixture
def events():
    receiver = EventReceiver()
    yield receiver
    receiver.stop()


def call(base, path, token, body=None, method="POST", timeout=5):
    url = f"{base}{path}?access_token={token}"
    if method == "GET":
        return requests.get(url, timeout=timeout).json()
    return requests.post(url, data=json.dumps(body, ensure_ascii=False).encode(), timeout=timeout).json()


def token_for(base, appid=APPID, secret=SECRET):
    return requests.post(
        f"{base}/cgi-bin/stable_token",
        timeout=5,
        data=json.dumps({"grant_type": "client_credential", "appid": appid, "secret": secret}),
    ).json()["access_token"]


def make_draft(fake, token, titles=("Headline", "Second", "Third"), appid=APPID):
    thumb = fake.seed_image_material("cover.png", PNG, appid)["media_id"]
    articles = [{"title": t, "content": f"<p>{t} body</p>", "thumb_media_id": thumb} for t in titles]
    return call(fake.base_url, "/cgi-bin/draft/add", token, {"articles": articles})["media_id"]


def sendall(fake, token, media_id, clientmsgid="edition-1", filter_=TO_ALL, timeout=5, **extra):
    """`fake`: the fake, or the base URL of one running elsewhere."""
    body = {
        "filter": filter_,
        "mpnews": {"media_id": media_id},
        "msgtype": "mpnews",
        "send_ignore_reprint": 0,
        "clientmsgid": clientmsgid,
        **extra,
    }
    if clientmsgid is None:
        del body["clientmsgid"]
    return call(getattr(fake, "base_url", fake), "/cgi-bin/message/mass/sendall", token, body, timeout=timeout)


def mass_status(fake, token, msg_id):
    return call(getattr(fake, "base_url", fake), "/cgi-bin/message/mass/get", token, {"msg_id": str(msg_id)})


def wait_finished(fake, msg_id, timeout=10):
    wait_until(lambda: fake.mass_sends[msg_id]["status"] != "SENDING", timeout, "the send never finished", every=0.02)
    return fake.mass_sends[msg_id]


@pytest.fixture
def token(fake):
    return token_for(fake.base_url)


@pytest.fixture
def draft(fake, token):
    return make_draft(fake, token)


# ---- sendall ---------------------------------------------------------------------------------------
def test_a_send_is_recorded_with_its_draft_and_answers_its_ids(fake, token, draft):
    fake.withhold_events = True
    answer = sendall(fake, token, draft, send_ignore_reprint=1)
    assert (answer["errcode"], answer["errmsg"]) == (0, "send job submission success")
    assert isinstance(answer["msg_id"], int) and isinstance(answer["msg_data_id"], int)
    send = fake.mass_sends[answer["msg_id"]]
    assert {
        k: send[k] for k in ("appid", "media_id", "filter", "clientmsgid", "msg_data_id", "send_ignore_reprint")
    } == {
        "appid": APPID,
        "media_id": draft,
        "filter": TO_ALL,
        "clientmsgid": "edition-1",
        "msg_data_id": answer["msg_data_id"],
        "send_ignore_reprint": 1,
    }
    assert [a["title"] for a in send["articles"]] == ["Headline", "Second", "Third"]
    assert send["status"] in ("SENDING", "SEND_SUCCESS") and abs(send["time"] - time.time()) < 10
    send = wait_finished(fake, answer["msg_id"])
    total = fake.followers[APPID]
    assert send["counts"]["TotalCount"] == total
    assert send["counts"]["FilterCount"] == send["counts"]["SentCount"] + send["counts"]["ErrorCount"] <= total
    # MASSSENDJOBFINISH's ArticleUrl in plain http, as the platform writes it (docs/api.md §18)
    assert [u.startswith("http://mp.weixin.qq.com/s/") for u in send["article_urls"]] == [True] * 3
    # Each article's page is served by the fake at its id, as a freepublished one is.
    page = requests.get(f"{fake.base_url}/s/{send['article_ids'][1]}", timeout=5)
    assert page.status_code == 200 and "<h1>Second</h1>" in page.text


def test_a_clientmsgid_sends_once_and_its_repeat_answers_45065_with_the_msg_id(fake, token, draft):
    fake.withhold_events = True
    fake.mass_quota_left[APPID] = 5
    first = sendall(fake, token, draft, clientmsgid="edition-7")
    again = sendall(fake, token, draft, clientmsgid="edition-7")
    assert again["errcode"] == 45065 and again["errmsg"].startswith("clientmsgid exist")
    assert again["msg_id"] == first["msg_id"] and "msg_data_id" not in again
    assert (len(fake.mass_sends), fake.sendall_calls, fake.mass_quota_left[APPID]) == (1, 2, 4)
    # Even with no quota left, and with another draft, a repeat is the same send, not a refusal.
    fake.mass_quota_left[APPID] = 0
    assert sendall(fake, token, make_draft(fake, token), clientmsgid="edition-7")["msg_id"] == first["msg_id"]
    # Another account's clientmsgids are its own.
    other = token_for(fake.base_url, OTHER_APPID, OTHER_SECRET)
    assert sendall(fake, other, make_draft(fake, other, appid=OTHER_APPID), clientmsgid="edition-7")["errcode"] == 0
    # A day later the clientmsgid is free again (and needs quota).
    fake.mass_sends[first["msg_id"]]["time"] -= 24 * 3600 + 1
    fake.reset_mass_quota(APPID)
    wait_finished(fake, first["msg_id"])  # the draft goes when the send succeeds, mass_seconds after it
    assert draft not in fake.drafts  # a sent draft is gone (fakeplatform/samples/draft_deleted.json)
    later = sendall(fake, token, make_draft(fake, token), clientmsgid="edition-7")
    assert later["errcode"] == 0 and later["msg_id"] != first["msg_id"] and len(fake.mass_sends) == 3


def test_the_quota_runs_out_with_45028_and_a_new_day_gives_it_back(fake, token, draft):
    fake.withhold_events = True
    assert fake.mass_quota_left[APPID] == 1 and fake.mass_quota_per_day == 1
    assert sendall(fake, token, draft, clientmsgid="a")["errcode"] == 0
    refused = sendall(fake, token, make_draft(fake, token), clientmsgid="b")  # a sent draft is gone
    assert refused["errcode"] == 45028 and refused["errmsg"].startswith("has no masssend quota")
    assert "msg_id" not in refused and len(fake.mass_sends) == 1 and fake.mass_quota_left[APPID] == 0
    # Another account has its own quota.
    other = token_for(fake.base_url, OTHER_APPID, OTHER_SECRET)
    assert sendall(fake, other, make_draft(fake, other, appid=OTHER_APPID), clientmsgid="b")["errcode"] == 0
    fake.reset_mass_quota()
    assert sendall(fake, token, make_draft(fake, token), clientmsgid="b")["errcode"] == 0
    fake.mass_quota_left[APPID] = 2  # a test may give more
    assert [sendall(fake, token, make_draft(fake, token), clientmsgid=c)["errcode"] for c in "cde"] == [0, 0, 45028]


@pytest.mark.parametrize(
    "change, errcode",
    [
        ({"mpnews": {"media_id": "DRAFT_unknown"}}, 40007),
        ({"mpnews": {}}, 40007),
        ({"msgtype": "text"}, 40008),
        ({"filter": {"is_to_all": False, "tag_id": 999}}, 40050),
        ({"filter": {"is_to_all": False, "tag_id": "100"}}, 40050),
        ({"filter": {"tag_id": 100}}, 47003),
        ({"send_ignore_reprint": 2}, 47003),
        ({"clientmsgid": "x" * 65}, 45067),
    ],
)
def test_a_bad_send_is_refused_and_sends_nothing(fake, token, draft, change, errcode):
    body = {
        "filter": TO_ALL,
        "mpnews": {"media_id": draft},
        "msgtype": "mpnews",
        "send_ignore_reprint": 0,
        "clientmsgid": "edition-1",
        **change,
    }
    answer = call(fake.base_url, "/cgi-bin/message/mass/sendall", token, body)
    assert answer["errcode"] == errcode, answer
    assert fake.mass_sends == {} and fake.mass_quota_left[APPID] == 1
    # Refused, the clientmsgid is still free.
    assert sendall(fake, token, draft, clientmsgid="edition-1")["errcode"] == 0


def test_another_accounts_draft_is_not_this_accounts(fake, token):
    other = token_for(fake.base_url, OTHER_APPID, OTHER_SECRET)
    theirs = make_draft(fake, other, appid=OTHER_APPID)
    assert sendall(fake, token, theirs)["errcode"] == 40007 and fake.mass_sends == {}


@pytest.mark.parametrize(
    "errcode, errmsg",
    [
        (48001, "api unauthorized"),
        (45066, "same clientmsgid retry too fast"),
        (40001, "invalid credential"),
        (-1, "system error"),
    ],
)
def test_a_forced_errcode_answers_without_sending(fake, token, draft, errcode, errmsg):
    fake.fail_next_sendall(errcode)
    answer = sendall(fake, token, draft)
    assert answer["errcode"] == errcode and answer["errmsg"].startswith(errmsg)
    assert fake.mass_sends == {} and fake.sendall_calls == 1 and fake.mass_quota_left[APPID] == 1
    assert sendall(fake, token, draft)["errcode"] == 0 and fake.sendall_calls == 2


def test_a_late_answer_comes_after_the_send_is_recorded(fake, token, draft):
    """A caller that gives up (or dies) mid-call finds on repeating that the send happened, once."""
    fake.withhold_events = True
    fake.sendall_delay = 10
    started = time.monotonic()
    with pytest.raises(requests.Timeout):
        sendall(fake, token, draft, timeout=0.2)
    [send] = fake.mass_sends.values()
    # The repeat is answered at once, even while the first answer is still being held back.
    repeat = sendall(fake, token, draft)
    assert repeat["errcode"] == 45065 and repeat["msg_id"] == send["msg_id"]
    assert time.monotonic() - started < 5 and fake.sendall_calls == 2 and len(fake.mass_sends) == 1


def _answered_later(fake, token, draft):
    """sendall called on a thread: (the thread, [its answer once it comes])."""
    answers = []
    caller = threading.Thread(target=lambda: answers.append(sendall(fake, token, draft, timeout=30)), daemon=True)
    caller.start()
    return caller, answers


def test_a_held_answer_goes_when_released_and_the_send_is_recorded_meanwhile(fake, token, draft):
    fake.withhold_events = True
    fake.hold_sendall()
    caller, answers = _answered_later(fake, token, draft)
    wait_until(lambda: len(fake.mass_sends) == 1, 10, "the send was not recorded")
    caller.join(0.5)  # an upper bound: the answer is held, so the thread must still be waiting
    assert caller.is_alive() and answers == []
    fake.release_sendall()
    caller.join(10)
    [send] = fake.mass_sends.values()
    assert answers and answers[0]["errcode"] == 0 and answers[0]["msg_id"] == send["msg_id"]
    assert sendall(fake, token, draft, timeout=5)["errcode"] == 45065  # released: the next is not held


def test_a_held_answer_forgotten_goes_after_sendall_hold_max(fake, token, draft):
    fake.withhold_events = True
    fake.sendall_hold_max = 1.0
    fake.hold_sendall()
    started = time.monotonic()
    caller, answers = _answered_later(fake, token, draft)
    caller.join(20)
    assert answers and answers[0]["errcode"] == 0 and time.monotonic() - started >= 1.0


def test_a_repeat_too_soon_answers_45066_when_the_platform_is_told_to(fake, token, draft):
    fake.withhold_events = True
    fake.sendall_retry_window = 60
    first = sendall(fake, token, draft)
    assert sendall(fake, token, draft)["errcode"] == 45066
    fake.sendall_retry_window = 0
    assert sendall(fake, token, draft)["msg_id"] == first["msg_id"] and len(fake.mass_sends) == 1


def test_a_multi_article_draft_can_be_previewed(fake, token, draft):
    answer = call(
        fake.base_url,
        "/cgi-bin/message/mass/preview",
        token,
        {"towxname": "editor-wechat", "mpnews": {"media_id": draft}, "msgtype": "mpnews"},
    )
    assert answer["errcode"] == 0 and fake.previews == [
        {"appid": APPID, "towxname": "editor-wechat", "media_id": draft}
    ]
    assert fake.mass_sends == {} and fake.mass_quota_left[APPID] == 1  # a preview is no send


# ---- mass/get -------------------------------------------------------------------------------------
def test_mass_get_follows_the_send(fake, token, draft):
    fake.withhold_events = True
    fake.mass_seconds = 60
    fake.mass_quota_left[APPID] = 3
    slow = sendall(fake, token, draft, clientmsgid="slow")["msg_id"]
    assert mass_status(fake, token, slow) == {"msg_id": slow, "msg_status": "SENDING"}
    assert call(fake.base_url, "/cgi-bin/message/mass/get", token, {"msg_id": slow})["msg_status"] == "SENDING"
    fake.mass_seconds = 0.05
    # Each send its own draft: a successful send removes its draft, so a second send of it may meet 40007.
    sent = sendall(fake, token, make_draft(fake, token), clientmsgid="sent")["msg_id"]
    fake.finish_next_mass_with("err(20001)")
    refused = sendall(fake, token, make_draft(fake, token), clientmsgid="refused")["msg_id"]
    wait_finished(fake, sent)
    wait_finished(fake, refused)
    assert mass_status(fake, token, sent)["msg_status"] == "SEND_SUCCESS"
    assert mass_status(fake, token, refused)["msg_status"] == "SEND_FAIL"
    assert fake.mass_sends[refused]["result"] == "err(20001)" and fake.mass_sends[refused]["article_urls"] == []
    fake.delete_mass(sent)
    assert mass_status(fake, token, sent) == {"msg_id": sent, "msg_status": "DELETE"}
    for unknown in (123, "not-a-number"):
        assert mass_status(fake, token, unknown)["errcode"] == 40059
    other = token_for(fake.base_url, OTHER_APPID, OTHER_SECRET)
    assert mass_status(fake, other, sent)["errcode"] == 40059  # another account's send


# ---- the event ------------------------------------------------------------------------------------
def _parsed(xml):
    root = ET.fromstring(xml)
    items = [
        (int(i.findtext("ArticleIdx")), i.findtext("ArticleUrl"))
        for i in root.findall("ArticleUrlResult/ResultList/item")
    ]
    counts = {k: int(root.findtext(k)) for k in ("TotalCount", "FilterCount", "SentCount", "ErrorCount")}
    return root, counts, items


@pytest.mark.parametrize("mode", ["plain", "compatible", "aes"])
def test_the_finished_send_is_pushed_signed_to_the_server_url(fake, token, draft, events, mode):
    aes_key = encoding_aes_key() if mode != "plain" else ""
    fake.send_events_to(APPID, events.url, TOKEN, aes_key, mode)
    msg_id = sendall(fake, token, draft)["msg_id"]
    path, query, body = events.wait_for(1)
    send = fake.mass_sends[msg_id]
    assert path == "/wechat/silicon-rise/events"
    assert query["signature"] == sha1_sorted(TOKEN, query["timestamp"], query["nonce"])
    assert abs(int(query["timestamp"]) - time.time()) < 60
    outer = ET.fromstring(body)
    if mode == "plain":
        assert "encrypt_type" not in query and outer.find("Encrypt") is None
        xml = body
    else:
        encrypted = outer.findtext("Encrypt")
        assert query["encrypt_type"] == "aes"
        assert query["msg_signature"] == sha1_sorted(TOKEN, query["timestamp"], query["nonce"], encrypted)
        xml = decrypt(aes_key, encrypted, APPID)
        assert (outer.findtext("Event") == "MASSSENDJOBFINISH") == (mode == "compatible")
    root, counts, items = _parsed(xml)
    assert (root.findtext("MsgType"), root.findtext("Event"), int(root.findtext("MsgID")), root.findtext("Status")) == (
        "event",
        "MASSSENDJOBFINISH",
        msg_id,
        "send success",
    )
    assert counts == send["counts"] and counts["TotalCount"] == fake.followers[APPID]
    assert items == [(1, send["article_urls"][0]), (2, send["article_urls"][1]), (3, send["article_urls"][2])]
    assert root.findtext("ArticleUrlResult/Count") == "3"
    # One copyright check per article, as the platform's sample (fakeplatform/samples/MASSSENDJOBFINISH.xml).
    assert [root.findtext(f"CopyrightCheckResult/{k}") for k in ("Count", "CheckState")] == ["3", "1"]
    assert [i.findtext("ArticleIdx") for i in root.findall("CopyrightCheckResult/ResultList/item")] == ["1", "2", "3"]
    # The fake notes the answer after the receiver has the push.
    wait_until(lambda: fake.mass_event_answers, what="the push's answer not noted", every=0.02)
    assert fake.mass_event_answers == [(msg_id, 200, "success")]


def test_a_refused_send_is_pushed_with_its_reason_and_no_urls(fake, token, draft, events):
    fake.send_events_to(APPID, events.url, TOKEN)
    fake.finish_next_mass_with("err(20013)")
    msg_id = sendall(fake, token, draft)["msg_id"]
    root, counts, items = _parsed(events.wait_for(1)[2])
    assert (int(root.findtext("MsgID")), root.findtext("Status"), items) == (msg_id, "err(20013)", [])
    assert counts["SentCount"] == 0 and root.findtext("ArticleUrlResult/Count") == "0"


def test_withheld_events_are_pushed_or_replayed_by_the_test(fake, token, draft, events):
    fake.send_events_to(APPID, events.url, TOKEN)
    fake.withhold_events = True
    msg_id = sendall(fake, token, draft)["msg_id"]
    send = wait_finished(fake, msg_id)
    assert events.received == []
    assert fake.push_mass_event(msg_id) == (200, "success")
    assert fake.push_mass_event(msg_id, status="send fail") == (200, "success")
    first, second = (_parsed(events.wait_for(n)[2]) for n in (1, 2))
    assert first[0].findtext("Status") == "send success" and second[0].findtext("Status") == "send fail"
    assert first[2] == [(i, url) for i, url in enumerate(send["article_urls"], 1)]
    # Elsewhere: a target of the test's own, and one that answers nothing.
    other = {"url": events.url, "token": "another", "aes_key": "", "mode": "plain"}
    assert fake.push_mass_event(msg_id, other)[0] == 200
    query = events.wait_for(3)[1]
    assert query["signature"] == sha1_sorted("another", query["timestamp"], query["nonce"])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/events"
    assert fake.push_mass_event(msg_id, dict(other, url=closed)) == (None, "ConnectionError")
    assert len(fake.mass_event_answers) == 4  # the test's pushes only


def test_the_event_xml_of_given_parts():
    xml = mass_event_xml(
        1000001,
        "send success",
        {"TotalCount": 9, "FilterCount": 8, "SentCount": 7, "ErrorCount": 1},
        ["https://mp.weixin.qq.com/s/a"],
    )
    root, counts, items = _parsed(xml)
    assert int(root.findtext("MsgID")) == 1000001 and counts == {
        "TotalCount": 9,
        "FilterCount": 8,
        "SentCount": 7,
        "ErrorCount": 1,
    }
    assert items == [(1, "https://mp.weixin.qq.com/s/a")]
    assert _parsed(mass_event_xml(5, "send fail", None, []))[1:] == (dict.fromkeys(counts, 0), [])


# ---- tags -------------------------------------------------------------------------------------------
def test_tags_get_answers_the_accounts_tags_and_a_tag_send_reaches_its_followers(fake, token, draft):
    fake.withhold_events = True
    tags = call(fake.base_url, "/cgi-bin/tags/get", token, method="GET")["tags"]
    assert {"id": 2, "name": "星标组", "count": 12} in tags
    assert all(set(t) == {"id", "name", "count"} for t in tags) and len(tags) >= 3
    fake.tags[APPID] = [{"id": 2, "name": "星标组", "count": 3}, {"id": 134, "name": "Guangdong", "count": 40}]
    assert call(fake.base_url, "/cgi-bin/tags/get", token, method="GET")["tags"][1]["id"] == 134
    other = token_for(fake.base_url, OTHER_APPID, OTHER_SECRET)
    assert len(call(fake.base_url, "/cgi-bin/tags/get", other, method="GET")["tags"]) == len(tags)
    msg_id = sendall(fake, token, draft, filter_={"is_to_all": False, "tag_id": 134})["msg_id"]
    assert wait_finished(fake, msg_id)["counts"]["TotalCount"] == 40
    assert fake.mass_sends[msg_id]["filter"] == {"is_to_all": False, "tag_id": 134}


# ---- readers' figures -----------------------------------------------------------------------------
def test_each_sent_article_has_figures_by_msg_data_id_and_index(fake, token, draft):
    """As the platform's page "获取发表内容发表详细数据" says: the contents published within the dates, each
    detail_list entry the running total from the publish day to its stat_date, at most 30 days, end_date
    at most yesterday, is_delay while a day is not final (fakeplatform/samples/)."""
    fake.withhold_events = True
    fake.mass_quota_left[APPID] = 2
    answer = sendall(fake, token, draft, clientmsgid="sent")
    fake.finish_next_mass_with("send fail")
    # Its own draft: the first send's is removed once that send succeeds (perhaps before this call).
    failed = sendall(fake, token, make_draft(fake, token), clientmsgid="failed")["msg_id"]
    send, _ = wait_finished(fake, answer["msg_id"]), wait_finished(fake, failed)
    day, after, yesterday = beijing_day(-3), beijing_day(-2), beijing_day(-1)
    fake.set_publish_day(answer["msg_data_id"], day)
    for stat_date, reads in ((day, 77), (after, 5), (yesterday, 3)):
        fake.day_figures[(send["article_ids"][1], stat_date)] = {"read_user": reads}

    def asked(begin, end=None, who=token):
        return call(
            fake.base_url, "/datacube/getarticletotaldetail", who, {"begin_date": begin, "end_date": end or begin}
        )

    totals = asked(day)
    items = {item["msgid"]: item for item in totals["list"]}
    data_id = answer["msg_data_id"]
    assert list(items) == [f"{data_id}_1", f"{data_id}_2", f"{data_id}_3"]  # the failed send has none
    assert totals["is_delay"] is False
    assert {key for item in items.values() for key in item} == {"ref_date", "msgid", "publish_type", "detail_list"}
    assert items[f"{data_id}_2"]["detail_list"] == [
        {"stat_date": day, "read_user": 77},
        {"stat_date": after, "read_user": 82},
        {"stat_date": yesterday, "read_user": 85},
    ]
    assert items[f"{data_id}_1"]["detail_list"][0]["read_user"] > 0 and items[f"{data_id}_1"]["ref_date"] == day
    assert asked(after)["list"] == [] and len(asked(day, yesterday)["list"]) == 3  # by the day it was published
    assert asked(day, who=token_for(fake.base_url, OTHER_APPID, OTHER_SECRET))["list"] == []
    assert asked(beijing_day(0))["errcode"] == 61501  # end_date at most yesterday
    fake.delay_days.add(yesterday)
    assert asked(day)["is_delay"] is True
    fake.set_publish_day(answer["msg_data_id"], beijing_day(-40))
    [entries] = {len(item["detail_list"]) for item in asked(beijing_day(-40))["list"]}
    assert entries == 30  # at most 30 days from the publish day


def test_mass_and_freepublish_items_come_together_before_a_tests_extra_ones(fake, token, draft):
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    publish_id = call(fake.base_url, "/cgi-bin/freepublish/submit", token, {"media_id": make_draft(fake, token)})[
        "publish_id"
    ]
    answer = sendall(fake, token, draft)
    wait_finished(fake, answer["msg_id"])
    wait_until(lambda: fake.publishes[publish_id]["status"] != 1, what="the publish never finished", every=0.02)
    day = beijing_day(-2)
    fake.set_publish_day(fake.publishes[publish_id]["msg_data_id"], day)
    fake.set_publish_day(answer["msg_data_id"], day)
    fake.extra_totals.append({"ref_date": day, "msgid": "extra_1", "detail_list": []})
    listed = call(fake.base_url, "/datacube/getarticletotaldetail", token, {"begin_date": day, "end_date": day})["list"]
    assert [item["msgid"] for item in listed] == [
        f"{fake.publishes[publish_id]['msg_data_id']}_1",
        *(f"{answer['msg_data_id']}_{i}" for i in (1, 2, 3)),
        "extra_1",
    ]


# ---- standalone -----------------------------------------------------------------------------------
def test_the_standalone_fake_mass_sends_and_pushes_to_the_service(events):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    service = events.url.removesuffix("/wechat/silicon-rise/events")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WECHAT_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakeplatform", "--port", str(port), "--service", service],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(11)]
        exports = dict(line.strip().removeprefix("export ").split("=", 1) for line in lines if "export" in line)
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: listening(port), 10, "the fake did not start")
        token = token_for(base, "wx-silicon-rise", "secret-silicon-rise")
        thumb = requests.post(
            f"{base}/cgi-bin/material/add_material?type=image&access_token={token}",
            timeout=5,
            files={"media": ("cover.png", PNG, "image/png")},
        ).json()["media_id"]
        media_id = call(
            base,
            "/cgi-bin/draft/add",
            token,
            {"articles": [{"title": "Alone", "content": "<p>x</p>", "thumb_media_id": thumb}]},
        )["media_id"]
        answer = sendall(base, token, media_id)
        assert answer["errcode"] == 0 and sendall(base, token, media_id)["msg_id"] == answer["msg_id"]
        path, query, body = events.wait_for(1)
        assert path == "/wechat/silicon-rise/events"
        assert query["signature"] == sha1_sorted(
            exports["WECHAT_SILICON_RISE_TOKEN"], query["timestamp"], query["nonce"]
        )
        assert int(ET.fromstring(body).findtext("MsgID")) == answer["msg_id"]
        assert mass_status(base, token, answer["msg_id"])["msg_status"] == "SEND_SUCCESS"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
