"""Headers and bodies from outside that the service could not read were 500s (docs/api.md §2): XML naming an
encoding Python lacks or one that is not text, an Origin or Referer that is not a URL, an image address with a
broken IPv6 host; an edition's send took "yes" for true and " 7 " for 7; and a server-URL check refused for a
repeated `echostr` spent its signed (timestamp, nonce) all the same."""

import secrets
import time

import pytest

from fakeplatform.freepublish import sha1_sorted
from models import ReviewTask, db
from tests.helpers.app import AGENT_TOKEN, built_app, signed_in_admin
from tests.helpers.chat import chat_settings
from tests.helpers.review import article_payload, body_option, make_asset

AGENT = {"x-review-agent-token": AGENT_TOKEN}
# Each names an encoding the XML parser cannot use: unknown (LookupError), a bytes-to-bytes codec, rot13.
ENCODINGS = ["x-nonexistent", "hex", "rot13", "zlib", "mbcs"]


def _xml(encoding):
    return f'<?xml version="1.0" encoding="{encoding}"?><xml><Encrypt>x</Encrypt></xml>'.encode()


def _signed(token):
    timestamp, nonce = str(int(time.time())), str(secrets.randbelow(10**9))
    return {"signature": sha1_sorted(token, timestamp, nonce), "timestamp": timestamp, "nonce": nonce}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_wecoms_callback_refuses_xml_in_an_encoding_it_cannot_read(make_app, chat_apps, encoding):
    with built_app(make_app, **chat_settings(chat_apps)) as app:
        answer = app.test_client().post("/wecom/events?msg_signature=x&timestamp=1&nonce=1", data=_xml(encoding))
    assert (answer.status_code, answer.get_data(as_text=True)) == (403, "the body is not the XML WeCom sends")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_server_url_answers_a_signed_push_it_cannot_read(make_app, encoding):
    with built_app(make_app, WECHAT_CARBON_FITNESS_TOKEN="tok") as app:
        answer = app.test_client().post(
            "/wechat/carbon-fitness/events", query_string=_signed("tok"), data=_xml(encoding)
        )
    assert (answer.status_code, answer.get_data(as_text=True)) == (200, "success")  # signed: read, and let be


@pytest.mark.parametrize("origin", ["http://[", "http://[::1", "http://host:port"])
def test_an_origin_that_is_not_a_url_is_another_origin(app, client, origin):
    signed_in = client.post("/api/auth/login", data={"username": "x", "password": "y"}, headers={"Origin": origin})
    assert signed_in.status_code == 403, signed_in.status_code
    admin = signed_in_admin(app)
    written = admin.post("/api/review/tasks/x/decision", json={}, headers={"Origin": origin})
    assert (written.status_code, written.get_json()["error"]["code"]) == (403, "forbidden")


def test_a_referer_that_is_not_a_url_leaves_the_sign_in_page_as_it_is(client):
    page = client.get("/login?error=invalid_credentials", headers={"Referer": "http://[::1/login"})
    assert page.status_code == 200, page.status_code


@pytest.mark.parametrize("where", ["cover", "body"])
def test_an_image_address_with_a_broken_host_is_a_validation_error_naming_it(app, client, where):
    cover = make_asset(app, 900, 500)
    payload = article_payload([cover["url"], "http://[::1/x.png"] if where == "cover" else [cover["url"]])
    if where == "body":
        payload["candidates"]["bodyOptions"] = [body_option("o", "正文\n\n![a](http://[::1/x.png)")]
    answer = client.post("/api/review/agent/tasks", json=payload, headers=AGENT)
    assert answer.status_code == 400, answer.get_json()
    path = "candidates.coverImages.1" if where == "cover" else "candidates.bodyOptions.0.content"
    assert list(answer.get_json()["error"]["details"]) == [path]
    with db.connection_context():
        assert ReviewTask.select().count() == 0


def test_an_editions_send_takes_only_true_false_and_whole_numbers():
    from schemas.editions import EditionSendSchema

    schema = EditionSendSchema()
    assert set(schema.validate({"ignoreReprint": "yes", "tagId": " 7 "})) == {"ignoreReprint", "tagId"}
    assert set(schema.validate({"ignoreReprint": 1, "tagId": 7.5})) == {"ignoreReprint", "tagId"}
    assert schema.validate({"ignoreReprint": True, "tagId": 7}) == {}


def test_a_server_url_check_refused_spends_nothing_of_its_signed_query(make_app):
    with built_app(make_app, WECHAT_CARBON_FITNESS_TOKEN="tok") as app:
        http = app.test_client()
        query = "&".join(f"{key}={value}" for key, value in _signed("tok").items())
        assert http.get(f"/wechat/carbon-fitness/events?{query}&echostr=a&echostr=b").status_code == 403
        answer = http.get(f"/wechat/carbon-fitness/events?{query}&echostr=a")
    assert (answer.status_code, answer.get_data(as_text=True)) == (200, "a")
