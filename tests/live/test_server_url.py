"""The account's server URL (docs/api.md §18): the platform's check, signed pushes in all three modes,
bad signatures and replays."""
import pytest
import requests

from fakeplatform.freepublish import encoding_aes_key, publish_event_xml, sha1_sorted, signed_push
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

APPID = ACCOUNTS["silicon-rise"][0]


def _query(token=LIVE_TOKEN, **extra):
    return {"signature": sha1_sorted(token, "1700000000", "42"), "timestamp": "1700000000", "nonce": "42", **extra}


def test_the_platforms_check_of_the_server_url(app, served_url):
    url = f"{served_url}/wechat/silicon-rise/events"
    good = requests.get(url, params=_query(echostr="echo-123"), timeout=5)
    assert (good.status_code, good.text, good.headers["Content-Type"].split(";")[0]) == (200, "echo-123", "text/plain")
    bad = requests.get(url, params=_query(token="wrong", echostr="echo-123"), timeout=5)
    assert bad.status_code == 403 and "echo-123" not in bad.text
    # An account without a token (carbon-fitness here) or one not configured has no server URL.
    assert requests.get(f"{served_url}/wechat/carbon-fitness/events", params=_query(echostr="x"), timeout=5
                        ).status_code == 404
    assert requests.get(f"{served_url}/wechat/elsewhere/events", params=_query(echostr="x"), timeout=5
                        ).status_code == 404


@pytest.fixture
def publishing(app, admin_client, agent_headers, fake, served_url):
    """A task submitted to the platform whose event has not come (withheld, and no poll soon)."""
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    app.extensions["settings"] = app.extensions["settings"].__class__.from_config(
        {**app.config, "WECHAT_PUBLISH_POLL_DELAYS": "3600"})
    task = published_article(app, admin_client, agent_headers)
    admin_client.post(go_live_url(task), json={})
    current = wait_for_live(admin_client, task, statuses=("publishing",))
    publish_id = current["live"]["publishId"]
    wait_until_finished(fake, publish_id)
    return current, publish_id


def wait_until_finished(fake, publish_id):
    import time

    deadline = time.monotonic() + 5
    while fake.publishes[publish_id]["status"] == 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize("mode", ["plain", "compatible", "aes"])
def test_each_mode_of_the_push_moves_the_task_live(admin_client, fake, served_url, publishing, mode):
    task, publish_id = publishing
    target = {"url": f"{served_url}/wechat/silicon-rise/events", "token": LIVE_TOKEN, "aes_key": LIVE_AES_KEY,
              "mode": mode}
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]
    assert live["status"] == "live" and live["articleUrl"] == fake.publishes[publish_id]["article_url"]


def test_masssendjobfinish_is_read_too(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    target = {"url": f"{served_url}/wechat/silicon-rise/events", "token": LIVE_TOKEN, "aes_key": "", "mode": "plain"}
    assert fake.push_publish_event(publish_id, target, event="MASSSENDJOBFINISH") == (200, "success")
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["live"]["status"] == "live"


@pytest.mark.parametrize("forgery", ["signature", "msg_signature", "key", "appid"])
def test_a_bad_signature_or_key_changes_nothing(admin_client, fake, served_url, publishing, forgery):
    task, publish_id = publishing
    publish = fake.publishes[publish_id]
    xml = publish_event_xml(publish_id, 0, publish["article_id"], publish["article_url"])
    url = f"{served_url}/wechat/silicon-rise/events"
    if forgery == "signature":
        answer = signed_push(url, "not-the-token", xml)
    elif forgery == "key":  # signed right, encrypted with another key
        answer = signed_push(url, LIVE_TOKEN, xml, "aes", encoding_aes_key(), APPID)
    elif forgery == "appid":  # made for another account
        answer = signed_push(url, LIVE_TOKEN, xml, "aes", LIVE_AES_KEY, "wx-someone-else")
    else:
        query = _query(encrypt_type="aes", msg_signature="0" * 40)
        answer = requests.post(url, params=query, data=b"<xml><Encrypt><![CDATA[AAAA]]></Encrypt></xml>", timeout=5)
    assert answer.status_code == 403, answer.text
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert after["live"] == task["live"] and after["version"] == task["version"]


def test_a_replayed_event_changes_nothing(admin_client, fake, served_url, publishing):
    task, publish_id = publishing
    target = {"url": f"{served_url}/wechat/silicon-rise/events", "token": LIVE_TOKEN, "aes_key": "", "mode": "plain"}
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    live = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    # The same event again, and a later one saying otherwise: answered, nothing changes.
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    fake.publishes[publish_id]["status"] = 5
    assert fake.push_publish_event(publish_id, target) == (200, "success")
    again = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert (again["live"], again["version"]) == (live["live"], live["version"])
    from models import OutboxMessage, db

    with db.connection_context():
        assert OutboxMessage.select().where(OutboxMessage.event_type == "review_task.live").count() == 1


def test_other_messages_and_unknown_submissions_are_answered_and_ignored(admin_client, served_url, publishing):
    task, _publish_id = publishing
    url = f"{served_url}/wechat/silicon-rise/events"
    text = (b"<xml><ToUserName>gh</ToUserName><FromUserName>o1</FromUserName><CreateTime>1</CreateTime>"
            b"<MsgType>text</MsgType><Content>hello</Content></xml>")
    assert requests.post(url, params=_query(), data=text, timeout=5).text == "success"
    unknown = publish_event_xml("999999", 0, "a", "http://x/s/a")
    assert signed_push(url, LIVE_TOKEN, unknown).text == "success"
    # Signed by the account's token yet unreadable (entities, not XML, empty): answered, nothing read.
    entities = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><xml><Event>&a;</Event></xml>'
    for body in (entities, b"not xml", b""):
        answer = requests.post(url, params=_query(), data=body, timeout=5)
        assert (answer.status_code, answer.text) == (200, "success"), body
    # Unsigned, the same bodies are refused before they are read.
    for body in (entities, b"not xml", text):
        assert requests.post(url, params=_query(token="wrong"), data=body, timeout=5).status_code == 403
    after = admin_client.get(f"/api/review/tasks/{task['id']}").get_json()
    assert after["live"] == task["live"]


def test_a_safe_mode_key_made_the_platforms_way_opens_what_the_platform_sealed(make_app, fake):
    key = encoding_aes_key()
    assert len(key) == 43 and key.isalnum()
    from fakeplatform.freepublish import encrypt
    from services.live.events import decrypt

    xml = publish_event_xml("123", 0, "art", "http://example/s/art")
    assert decrypt(key, encrypt(key, xml, APPID), APPID) == xml
    with pytest.raises(ValueError):
        decrypt(key, encrypt(key, xml, "wx-other"), APPID)
    # A key that is not 43 characters stops the start, naming the setting.
    from services.settings import SettingsError

    with pytest.raises(SettingsError, match="WECHAT_SILICON_RISE_AES_KEY"):
        with built_app(make_app, **platform_settings(fake, WECHAT_SILICON_RISE_TOKEN="t",
                                                     WECHAT_SILICON_RISE_AES_KEY="short")):
            pass
