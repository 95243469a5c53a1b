"""The account's server URL (docs/api.md §18): the platform's check, signed pushes in all three modes, and
what an attacker who has seen one signed query can do with it (nothing): stale or replayed queries, any
body under a captured query, plaintext to an account with a key, hostile XML, addresses not the platform's."""

import secrets
import time

import pytest
import requests

from fakeplatform.freepublish import encoding_aes_key, encrypt, publish_event_xml, sha1_sorted, signed_push
from tests.helpers.app import built_app
from tests.helpers.publishing import (
    ACCOUNTS,
    LIVE_AES_KEY,
    LIVE_TOKEN,
    go_live_url,
    platform_settings,
    published_article,
    wait_for_live,
)
from tests.helpers.waiting import wait_until

APPID = ACCOUNTS["silicon-rise"][0]
PLAIN_TOKEN = "event-token-carbon-fitness"  # carbon-fitness has a token and no key: plaintext is its mode


@pytest.fixture
def live_settings(fake):
    """No poll soon: the events decide (the worker reads its settings once, at start)."""
    return platform_settings(
        fake,
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="3600",
        WECHAT_SILICON_RISE_TOKEN=LIVE_TOKEN,
        WECHAT_SILICON_RISE_AES_KEY=LIVE_AES_KEY,
        WECHAT_CARBON_FITNESS_TOKEN=PLAIN_TOKEN,
    )


def _query(token=LIVE_TOKEN, timestamp=None, nonce=None, **extra):
    timestamp = str(int(time.time())) if timestamp is None else str(timestamp)
    nonce = nonce or str(secrets.randbelow(10**9))
    return {"signature": sha1_sorted(token, timestamp, nonce), "timestamp": timestamp, "nonce": nonce, **extra}


def test_the_platforms_check_of_the_server_url(app, served_url):
    url = f"{served_url}/wechat/silicon-rise/events"
    good = requests.get(url, params=_query(echostr="echo-123"), timeout=5)
    assert (good.status_code, good.text, good.headers["Content-Type"].split(";")[0]) == (200, "echo-123", "text/plain")
    bad = requests.get(url, params=_query(token="wrong", echostr="echo-123"), timeout=5)
    assert bad.status_code == 403 and "echo-123" not in bad.text
    # The age rule: a 2023 timestamp, and one past the 300 s window either way (by a minute: a loaded machine's
    # request can take a second or more, which brought one a second past it back inside).
    for timestamp in (1700000000, int(time.time()) - 360, int(time.time()) + 360):
        stale = requests.get(url, params=_query(timestamp=timestamp, echostr="echo-123"), timeout=5)
        assert stale.status_code == 403 and "echo-123" not in stale.text, timestamp
    # An account without a token, or one not configured, has no server URL.
    assert (
        requests.get(f"{served_url}/wechat/elsewhere/events", params=_query(echostr="x"), timeout=5).status_code == 404
    )


@pytest.fixture
def publishing(app, admin_client, agent_headers, fake, served_url, request):
    """A task submitted to the platform whose event has not come (withheld, and no poll soon); on
    silicon-rise (safe mode) unless the test asks for carbon-fitness (plaintext)."""
    account = getattr(request, "param", "silicon-rise")
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    task = published_article(app, admin_client, agent_headers, account=account)
    admin_client.post(go_live_url(task), json={})
    current = wait_for_live(admin_client, task, statuses=("publishing",))
    publish_id = current["live"]["publishId"]
    wait_until_finished(fake, publish_id)
    return current, publish_id


def wait_until_finished(fake, publish_id):
    wait_until(lambda: fake.publishes[publish_id]["status"] != 1, what="the publish never finished", every=0.02)


def _unchanged(admin_client, task):
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert (after["live"], after["version"]) == (task["live"], task["version"])


def _event(fake, publish_id, status=0, url=None, event="PUBLISHJOBFINISH"):
    publish = fake.publishes[publish_id]
    return publish_event_xml(publish_id, status, publish["article_id"], url or publish["article_url"], event)


@pytest.mark.parametrize("mode", ["compatible", "aes"])
def test_safe_and_compatible_mode_move_the_task_live(admin_client, fake, served_url, publishing, mode):
    task, publish_id = publishing
    target = {
        "url": f"{served_url}/wechat/silicon-rise/events",
        "token": LIVE_TOKEN,
        "aes_key": LIVE_AES_KEY,
        "mode": mode,
    }
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    sent = fake.publishes[publish_id]["article_url"]  # the platform's own spelling: plain http
    assert live["status"] == "live" and live["articleUrl"] == "https://" + sent.removeprefix("http://")
    assert live["articleUrl"].startswith("https://mp.weixin.qq.com/s?__biz=")


@pytest.mark.parametrize(
    "sent",
    [
        "http://mp.weixin.qq.com/s?__biz=MzA5NjU1NjA2MQ==&mid=2650000001&idx=1&sn=5a808babb1652ebc1fc768bb90e9691c#rd",
        "http://mp.weixin.qq.com/s/YIpdZXAJnouoMDBfHxQG1A",
    ],
)
def test_the_platforms_http_address_is_kept_as_https(admin_client, fake, served_url, publishing, sent):
    """Real PUBLISHJOBFINISH events write the address in plain http (docs/api.md §18): kept, shown as https,
    and the agent's webhook carries the same (issue 53, 1)."""
    from models import OutboxMessage, db

    task, publish_id = publishing
    url = f"{served_url}/wechat/silicon-rise/events"
    answer = signed_push(url, LIVE_TOKEN, _event(fake, publish_id, url=sent), "aes", LIVE_AES_KEY, APPID)
    assert answer.text == "success"
    shown = "https://" + sent.removeprefix("http://")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    assert (live["status"], live["articleUrl"]) == ("live", shown)
    with db.connection_context():
        [webhook] = [m.payload for m in OutboxMessage.select().where(OutboxMessage.event_type == "review_task.live")]
    assert webhook["data"]["articleUrl"] == shown
    assert shown.replace("&", "&amp;") in admin_client.get(f"/review/{task['id']}").get_data(as_text=True)


@pytest.mark.parametrize("publishing", ["carbon-fitness"], indirect=True)
def test_plaintext_moves_a_task_of_an_account_without_a_key(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    target = {"url": f"{served_url}/wechat/carbon-fitness/events", "token": PLAIN_TOKEN, "aes_key": "", "mode": "plain"}
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]["status"] == "live"


def test_compatible_mode_reads_only_what_is_sealed(admin_client, fake, served_url, publishing):
    """The plaintext beside Encrypt says `failed` with another address; only the sealed event counts."""
    task, publish_id = publishing
    sealed = encrypt(LIVE_AES_KEY, _event(fake, publish_id), APPID)
    forged = _event(fake, publish_id, status=4, url="https://mp.weixin.qq.com/s/forged").decode()[len("<xml>") : -6]
    query = _query()
    query.update(encrypt_type="aes", msg_signature=sha1_sorted(LIVE_TOKEN, query["timestamp"], query["nonce"], sealed))
    body = f"<xml>{forged}<Encrypt><![CDATA[{sealed}]]></Encrypt></xml>".encode()
    answer = requests.post(f"{served_url}/wechat/silicon-rise/events", params=query, data=body, timeout=5)
    assert (answer.status_code, answer.text) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    sent = fake.publishes[publish_id]["article_url"]
    assert live["status"] == "live" and live["articleUrl"] == "https://" + sent.removeprefix("http://")


@pytest.mark.parametrize("forgery", ["signature", "msg_signature", "key", "appid"])
def test_a_bad_signature_or_key_changes_nothing(admin_client, fake, served_url, publishing, forgery):
    task, publish_id = publishing
    xml = _event(fake, publish_id)
    url = f"{served_url}/wechat/silicon-rise/events"
    if forgery == "signature":
        answer = signed_push(url, "not-the-token", xml, "aes", LIVE_AES_KEY, APPID)
    elif forgery == "key":  # signed right, encrypted with another key
        answer = signed_push(url, LIVE_TOKEN, xml, "aes", encoding_aes_key(), APPID)
    elif forgery == "appid":  # made for another account
        answer = signed_push(url, LIVE_TOKEN, xml, "aes", LIVE_AES_KEY, "wx-someone-else")
    else:
        query = _query(encrypt_type="aes", msg_signature="0" * 40)
        answer = requests.post(url, params=query, data=b"<xml><Encrypt><![CDATA[AAAA]]></Encrypt></xml>", timeout=5)
    assert answer.status_code == 403, answer.text
    _unchanged(admin_client, task)


def test_a_captured_query_signs_no_other_body(admin_client, fake, served_url, publishing):
    """Issue 41: the query's signature covers no body. With a key, plaintext is refused however it is asked
    (no encrypt_type, `AES`, a duplicated parameter); a captured safe-mode query signs only its own Encrypt."""
    task, publish_id = publishing
    url = f"{served_url}/wechat/silicon-rise/events"
    forged = _event(fake, publish_id, status=0, url="javascript:alert(1)")
    for extra in ({}, {"encrypt_type": "AES"}, {"encrypt_type": ["aes", "raw"]}, {"encrypt_type": "raw"}):
        answer = requests.post(url, params=_query(**extra), data=forged, timeout=5)
        assert answer.status_code == 403, (extra, answer.text)
    # A real safe-mode query, seen in a log, with another sealed body: its msg_signature does not match.
    query = _query()
    sealed = encrypt(LIVE_AES_KEY, _event(fake, publish_id), APPID)
    query.update(encrypt_type="aes", msg_signature=sha1_sorted(LIVE_TOKEN, query["timestamp"], query["nonce"], sealed))
    other = encrypt(LIVE_AES_KEY, forged, APPID)
    answer = requests.post(url, params=query, data=f"<xml><Encrypt>{other}</Encrypt></xml>".encode(), timeout=5)
    assert answer.status_code == 403
    _unchanged(admin_client, task)


@pytest.mark.parametrize("publishing", ["carbon-fitness"], indirect=True)
def test_a_replayed_or_stale_query_changes_nothing(admin_client, fake, served_url, publishing):
    """Plaintext (an account without a key): a (timestamp, nonce) is taken once; an old one not at all."""
    task, publish_id = publishing
    url = f"{served_url}/wechat/carbon-fitness/events"
    failed = _event(fake, publish_id, status=5)
    stale = signed_push(url, PLAIN_TOKEN, failed, timestamp="1700000000")
    assert stale.status_code == 403
    ahead = signed_push(url, PLAIN_TOKEN, failed, timestamp=str(int(time.time()) + 400))
    assert ahead.status_code == 403
    _unchanged(admin_client, task)
    # The platform's own push of a text message is taken; the same query replayed with the failure is not.
    text = b"<xml><MsgType>text</MsgType><Content>hello</Content></xml>"
    query_time, nonce = str(int(time.time())), "12345"
    assert signed_push(url, PLAIN_TOKEN, text, timestamp=query_time, nonce=nonce).text == "success"
    replay = signed_push(url, PLAIN_TOKEN, failed, timestamp=query_time, nonce=nonce)
    assert (replay.status_code, replay.text) == (200, "success")
    _unchanged(admin_client, task)
    from models import SeenNonce, db

    with db.connection_context():  # the once-only key is the query's signature (docs/api.md §18)
        assert SeenNonce.select().where(SeenNonce.nonce == sha1_sorted(PLAIN_TOKEN, query_time, nonce)).count() == 1


@pytest.mark.parametrize("publishing", ["carbon-fitness"], indirect=True)
def test_a_captured_get_query_or_an_unreadable_push_spends_its_nonce(admin_client, fake, served_url, publishing):
    """A GET check's query (seen in a log) cannot sign a push; nor can the query of a push whose body the
    service could not read (a signed query with a bad body is spent all the same)."""
    task, publish_id = publishing
    url = f"{served_url}/wechat/carbon-fitness/events"
    failed = _event(fake, publish_id, status=5)
    query_time = str(int(time.time()))
    check = requests.get(url, params=_query(PLAIN_TOKEN, query_time, "777", echostr="e"), timeout=5)
    assert (check.status_code, check.text) == (200, "e")
    again = requests.get(url, params=_query(PLAIN_TOKEN, query_time, "777", echostr="e"), timeout=5)
    assert again.status_code == 403
    assert signed_push(url, PLAIN_TOKEN, failed, timestamp=query_time, nonce="777").text == "success"
    _unchanged(admin_client, task)
    assert signed_push(url, PLAIN_TOKEN, b"not xml", timestamp=query_time, nonce="778").text == "success"
    assert signed_push(url, PLAIN_TOKEN, failed, timestamp=query_time, nonce="778").text == "success"
    _unchanged(admin_client, task)


def test_a_repeated_or_contradicting_event_changes_nothing(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    target = {
        "url": f"{served_url}/wechat/silicon-rise/events",
        "token": LIVE_TOKEN,
        "aes_key": LIVE_AES_KEY,
        "mode": "aes",
    }
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    # The same event again (a new nonce), and a later one saying otherwise: answered, nothing changes.
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    fake.publishes[publish_id]["status"] = 5
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    again = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert (again["live"], again["version"]) == (live["live"], live["version"])
    from models import OutboxMessage, db

    with db.connection_context():
        assert OutboxMessage.select().where(OutboxMessage.event_type == "review_task.live").count() == 1


def test_masssendjobfinish_does_not_settle_a_submission(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    target = {
        "url": f"{served_url}/wechat/silicon-rise/events",
        "token": LIVE_TOKEN,
        "aes_key": LIVE_AES_KEY,
        "mode": "aes",
    }
    assert fake.push_publish_event(publish_id, target, event="MASSSENDJOBFINISH") == (200, "success")
    _unchanged(admin_client, task)


@pytest.mark.parametrize("publishing", ["carbon-fitness"], indirect=True)
@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "https://evil.example/s/a",
        "http://mp.weixin.qq.com:80/s/a",  # a port
        "https://mp.weixin.qq.com:8443/s/a",
        "http://user@mp.weixin.qq.com/s/a",  # user info
        "http://mp.weixin.qq.com@evil.example/s/a",
        "ftp://mp.weixin.qq.com/s/a",
        "//mp.weixin.qq.com/s/a",
        "http://mp.weixin.qq.com.evil/s/a",
        "https://mp.weixin.qq.com/s/a\n<@all>",
        "https://mp.weixin.qq.com.evil/s/a",
        "https://mp.weixin.qq.com/s/a)[click](https://evil.example/x",
        "https://mp.weixin.qq.com/s/a@all",
        "https://mp.weixin.qq.com/s/!'*",
    ],
)
def test_an_address_not_the_platforms_is_not_kept(admin_client, fake, served_url, publishing, url):
    task, publish_id = publishing
    answer = signed_push(f"{served_url}/wechat/carbon-fitness/events", PLAIN_TOKEN, _event(fake, publish_id, url=url))
    assert answer.text == "success"
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert after["live"]["status"] == "live" and after["live"]["articleUrl"] is None
    page = admin_client.get(f"/review/{task['id']}").get_data(as_text=True)
    assert "javascript:" not in page and "evil.example" not in page and 'id="live-link"' not in page


def test_an_event_for_another_accounts_submission_changes_nothing(admin_client, fake, served_url, publishing):
    """carbon-fitness's token signs a push naming silicon-rise's publish_id: not its submission."""
    task, publish_id = publishing
    answer = signed_push(f"{served_url}/wechat/carbon-fitness/events", PLAIN_TOKEN, _event(fake, publish_id))
    assert (answer.status_code, answer.text) == (200, "success")
    _unchanged(admin_client, task)


@pytest.mark.parametrize("publishing", ["carbon-fitness"], indirect=True)
def test_other_messages_and_hostile_xml_are_answered_and_ignored(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    url = f"{served_url}/wechat/carbon-fitness/events"
    text = (
        b"<xml><ToUserName>gh</ToUserName><FromUserName>o1</FromUserName><CreateTime>1</CreateTime>"
        b"<MsgType>text</MsgType><Content>hello</Content></xml>"
    )
    assert signed_push(url, PLAIN_TOKEN, text).text == "success"
    assert (
        signed_push(url, PLAIN_TOKEN, publish_event_xml("999999", 0, "a", "https://mp.weixin.qq.com/s/a")).text
        == "success"
    )
    # Signed yet unreadable (entities, a DTD in UTF-16 which a byte check for "<!DOCTYPE" misses, not XML,
    # empty): answered, nothing read.
    entities = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><xml><Event>&a;</Event></xml>'
    utf16 = (
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE x [<!ENTITY a "PUBLISHJOBFINISH">]>'
        f"<xml><Event>&a;</Event><PublishEventInfo><publish_id>{publish_id}</publish_id>"
        "<publish_status>4</publish_status></PublishEventInfo></xml>"
    ).encode("utf-16")
    for body in (entities, utf16, b"not xml", b""):
        answer = signed_push(url, PLAIN_TOKEN, body)
        assert (answer.status_code, answer.text) == (200, "success"), body[:40]
    # Unsigned, the same bodies are refused before they are read.
    for body in (entities, b"not xml", text):
        assert requests.post(url, params=_query(token="wrong"), data=body, timeout=5).status_code == 403
    _unchanged(admin_client, task)


# The platform's own sample in its message encryption kit (WXBizMsgCrypt's demo, repeated in SDKs' tests):
# not made by our fake's encrypt, so a shared mistake in both cannot pass.
VECTOR = {
    "key": "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "token": "spamtest",
    "timestamp": "1409735669",
    "nonce": "1320562132",
    "appid": "wx2c2769f8efd9abc2",
    "msg_signature": "5d197aaffba7e9b25a30732f161a50dee96bd5fa",
    "encrypt": "hyzAe4OzmOMbd6TvGdIOO6uBmdJoD0Fk53REIHvxYtJlE2B655HuD0m8KUePWB3+LrPXo87wzQ1QLvbeUgmBM4x6F8PGHQ"
    "HFVAFmOD2LdJF9FrXpbUAh0B5GIItb52sn896wVsMSHGuPE328HnRGBcrS7C41IzDWyWNlZkyyXwon8T332jisa+h6tEDYsV"
    "ticbSnyU8dKOIbgU6ux5VTjg3yt+WGzjlpKn6NPhRjpA912xMezR4kw6KWwMrCVKSVCZciVGCgavjIQ6X8tCOp3yZbGpy0VxpA"
    "e+77TszTfRd5RJSVO/HTnifJpXgCSUdUue1v6h0EIBYYI1BD1DlD+C0CR8e6OewpusjZ4uBl9FyJvnhvQl+q5rv1ixrcpCumEPo"
    "5MJSgM9ehVsNPfUM669WuMyVWQLCzpu9GhglF2PE=",
}


def test_the_platforms_published_sample_opens(make_app, fake):
    from services.platform.pushes import decrypt, signature

    v = VECTOR
    assert signature(v["token"], v["timestamp"], v["nonce"], v["encrypt"]) == v["msg_signature"]
    inner = decrypt(v["key"], v["encrypt"], v["appid"])
    assert inner.startswith(b"<xml><ToUserName><![CDATA[gh_10f6c3c3ac5a]]>")
    assert b"<Content><![CDATA[abcdteT]]></Content>" in inner
    with pytest.raises(ValueError):
        decrypt(v["key"], v["encrypt"], "wx-other")
    # Our fake seals the same way: what it encrypts opens here.
    key = encoding_aes_key()
    assert decrypt(key, encrypt(key, inner, APPID), APPID) == inner
    # A key that is not 43 characters stops the start, naming the setting.
    from services.settings import SettingsError

    with pytest.raises(SettingsError, match="WECHAT_SILICON_RISE_AES_KEY"):
        with built_app(
            make_app, **platform_settings(fake, WECHAT_SILICON_RISE_TOKEN="t", WECHAT_SILICON_RISE_AES_KEY="short")
        ):
            pass


def test_an_address_kept_before_the_rule_is_cleared_by_the_upgrade(
    make_app, admin_client, fake, served_url, publishing
):
    """Schema 18: a stored address that is not the platform's (a Markdown link smuggled after /s/…) goes."""
    task, publish_id = publishing
    target = {
        "url": f"{served_url}/wechat/silicon-rise/events",
        "token": LIVE_TOKEN,
        "aes_key": LIVE_AES_KEY,
        "mode": "aes",
    }
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    from models import TaskLive, db

    good = fake.publishes[publish_id]["article_url"]
    with db.connection_context():
        db.execute_sql("UPDATE task_live SET article_url = ?", (good + ")[x](https://evil.example",))
        db.execute_sql("UPDATE schema_version SET version = 17")
    make_app()  # restart: the upgrade runs
    with db.connection_context():
        assert [row.article_url for row in TaskLive.select()] == [None]
