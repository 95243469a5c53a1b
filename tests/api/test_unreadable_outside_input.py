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


NUL_URLS = [
    "/api/review/tasks/a%00b",
    "/api/review/tasks/a%00b/comments",
    "/api/review/tasks/a%00b/package",
    "/api/review/tasks/a%00b/stats",
    "/api/review/agent/tasks/a%00b",
    "/api/review/agent/tasks/a%00b/comments",
    "/api/feedbacks/a%00b",
    "/api/assets/a%00b",
    "/api/assets?q=a%00b",
    "/api/feedbacks?appName=a%00b",
    "/api/feedbacks?platform=a%00b",
    "/uploads/review/a%00b.png",
    "/review/a%00b",
    "/feedback/a%00b",
    "/editions?account=silicon-rise&edition=x%00y",  # pages read their queries themselves
    "/comments?account=a%00b",
]


@pytest.mark.both_stores
@pytest.mark.parametrize("url", NUL_URLS)
def test_a_url_holding_a_nul_is_a_validation_error(admin_client, client, url):
    """A NUL in a record's name was a 500 on PostgreSQL (its text cannot even be compared with one), and on
    SQLite a 404 whose message echoed it, which a strict JSON reader refuses. Credentials still come first."""
    answers = [http.get(url, headers=headers) for http, headers in ((admin_client, {}), (client, AGENT))]
    assert sorted({a.status_code for a in answers} - {400}) in ([], [303], [401]), (url, answers)
    refused = [a for a in answers if a.status_code == 400]
    assert refused, url  # by the credential the route takes
    for answer in refused:
        if answer.mimetype == "application/json":
            details = answer.get_json()["error"]["details"]  # the path's, or the query parameter's
            assert details == {"url": ["NUL"]} or list(details.values()) == [["must not contain NUL (\\u0000)"]]
    anonymous = client.get(url)
    assert anonymous.status_code in (401, 303), (url, anonymous.status_code)


def test_sign_in_with_a_nul_in_its_query_answers_as_ever(client):
    """Sign-in names no record: it still redirects (its `next` is refused as any control character is)."""
    answer = client.post("/api/auth/login?next=%2Fa%00b", data={"username": "x", "password": "y"})
    assert answer.status_code == 303
