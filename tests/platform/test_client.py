"""The platform client against the fake platform over real HTTP (docs/api.md §5)."""

import io
import json
import os
import socket
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from PIL import Image

from fakeplatform import FakePlatform
from models.base import db, init_database
from models.platform import PlatformToken, PlatformUpload
from rules.ids import iso, utcnow
from services.outbound import Deadline
from services.platform.client import (
    PlatformClient,
    PlatformError,
    cached_upload,
    client_for,
    forget_upload,
    remember_upload,
)
from services.settings import Settings
from tests.helpers.images import encoded, noise_image, png_bytes
from tests.helpers.scripted import ScriptedServer
from tests.helpers.served import listening
from tests.helpers.waiting import wait_until

APPID, SECRET = "wx-silicon-rise", "secret-silicon-rise-0123456789"
ACCOUNT = "silicon-rise"
MB = 1024 * 1024


@pytest.fixture
def fake_platform():
    fake = FakePlatform({APPID: SECRET})
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def database(tmp_path):
    init_database(sqlite_path=str(tmp_path / "t.db"))
    db.create_tables([PlatformToken, PlatformUpload])
    yield db
    db.close()


@pytest.fixture
def client(fake_platform, database):
    return PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url, timeout=(2, 5))


def news_article(thumb_media_id, **fields):
    article = {
        "title": "Hello",
        "author": "Ada",
        "digest": "short",
        "content": "<p>body</p>",
        "thumb_media_id": thumb_media_id,
    }
    article.update(fields)
    return article


def stable_token_calls(fake):
    return [r["json"] for r in fake.requests_to("/stable_token")]


# ---- access token ------------------------------------------------------------------------------
def test_token_is_fetched_once_and_cached_in_the_database(client, fake_platform):
    first = client.access_token()
    second = client.access_token()
    # a new client (another thread or process) reads the same cached token
    third = PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url).access_token()

    assert first == second == third
    assert stable_token_calls(fake_platform) == [
        {"grant_type": "client_credential", "appid": APPID, "secret": SECRET, "force_refresh": False}
    ]
    row = PlatformToken.get(PlatformToken.account == ACCOUNT)
    assert row.access_token == first
    assert iso(utcnow() + timedelta(seconds=7100)) < row.expires_at <= iso(utcnow() + timedelta(seconds=7200))


def test_token_within_five_minutes_of_expiry_is_refreshed(client, fake_platform):
    client.access_token()
    row = PlatformToken.get(PlatformToken.account == ACCOUNT)

    row.expires_at = iso(utcnow() + timedelta(minutes=6))
    row.save()
    client.access_token()
    assert len(stable_token_calls(fake_platform)) == 1  # still 6 minutes left: cached

    row.access_token, row.expires_at = "OLD-TOKEN", iso(utcnow() + timedelta(minutes=4))
    row.save()
    token = client.access_token()
    assert len(stable_token_calls(fake_platform)) == 2
    assert token != "OLD-TOKEN"
    refreshed = PlatformToken.get(PlatformToken.account == ACCOUNT)
    assert refreshed.access_token == token
    assert refreshed.expires_at > iso(utcnow() + timedelta(hours=1))


def test_rejected_token_is_renewed_once_and_the_call_repeated_once(client, fake_platform):
    old = client.access_token()
    fake_platform.seed_image_material("a.png", png_bytes())
    fake_platform.expire_tokens()  # the platform answers 42001 to the cached token

    page = client.batchget_images(0, 20)

    assert page["total_count"] == 1
    paths = [r["path"].rsplit("/", 1)[-1] for r in fake_platform.requests]
    assert paths == ["stable_token", "batchget_material", "stable_token", "batchget_material"]
    # expired: normal mode answers a new token, and nothing is forced (docs/api.md §5 "Tokens")
    assert [c["force_refresh"] for c in stable_token_calls(fake_platform)] == [False, False]
    batchgets = fake_platform.requests_to("batchget_material")
    assert batchgets[0]["query"]["access_token"] == old
    new = batchgets[1]["query"]["access_token"]
    assert new != old
    assert PlatformToken.get(PlatformToken.account == ACCOUNT).access_token == new


def test_a_refused_token_that_cannot_be_renewed_is_the_calls_refusal(client, fake_platform):
    """freepublish/submit refused the token and stable_token then failed: the old call failed with no errcode,
    which going live reads as "no answer, may have been submitted", though the platform took nothing."""
    client.access_token()
    fake_platform.expire_tokens()
    fake_platform.fail_next("stable_token", status=502, body="bad gateway")
    with pytest.raises(PlatformError) as caught:
        client.submit_publish("DRAFT_x")
    assert caught.value.errcode == 42001, caught.value
    assert "no new token" in str(caught.value) and "HTTP 502" in str(caught.value), str(caught.value)
    assert len(fake_platform.requests_to("freepublish/submit")) == 1


def test_errcode_40001_renews_and_repeats_exactly_once(client, fake_platform):
    client.access_token()
    fake_platform.fail_next("draft/get", errcode=40001, errmsg="invalid credential", times=2)

    with pytest.raises(PlatformError) as caught:
        client.get_draft("DRAFT_x")

    assert caught.value.errcode == 40001
    assert len(fake_platform.requests_to("draft/get")) == 2
    # normal mode answered the very token refused: only then is a refresh forced
    assert [c["force_refresh"] for c in stable_token_calls(fake_platform)] == [False, False, True]


def test_a_token_refreshed_meanwhile_by_someone_else_is_used_without_asking_again(client, fake_platform):
    first = client.access_token()
    second = client.renewed_token(first)  # first was refused, and normal mode answers it: forced
    assert second != first
    assert client.renewed_token(first) == second  # already replaced: no call
    assert [c["force_refresh"] for c in stable_token_calls(fake_platform)] == [False, False, True]


def test_concurrent_calls_with_a_rejected_token_renew_it_once(fake_platform, database):
    PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url).access_token()
    fake_platform.seed_image_material("a.png", png_bytes())
    fake_platform.expire_tokens()

    def list_materials(_):
        client = PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url)
        return client.batchget_images(0, 10)["total_count"]

    with ThreadPoolExecutor(max_workers=6) as pool:
        totals = list(pool.map(list_materials, range(6)))

    assert totals == [1] * 6
    assert [c["force_refresh"] for c in stable_token_calls(fake_platform)] == [False, False]


def test_a_failing_post_is_not_repeated(client, fake_platform):
    client.access_token()
    fake_platform.fail_next("draft/add", errcode=45009, errmsg="reach max api daily quota limit")

    with pytest.raises(PlatformError) as caught:
        client.add_draft([news_article("MEDIA_x")])

    assert str(caught.value) == "platform error 45009: reach max api daily quota limit"
    assert len(fake_platform.requests_to("draft/add")) == 1
    assert len(stable_token_calls(fake_platform)) == 1


def test_wrong_secret_is_reported_without_the_secret(fake_platform, database):
    wrong = "wrong-secret-abcdef987654"
    bad = PlatformClient(ACCOUNT, APPID, wrong, fake_platform.base_url)
    with pytest.raises(PlatformError) as caught:
        bad.access_token()
    assert caught.value.errcode == 40125
    assert str(caught.value) == "platform error 40125: invalid appsecret"
    assert wrong not in "".join(traceback.format_exception(caught.value))
    assert PlatformToken.select().count() == 0


# ---- wire format ---------------------------------------------------------------------------------
def test_chinese_title_travels_as_utf8_bytes_and_comes_back(client, fake_platform):
    cover = client.add_material_image("cover.png", png_bytes(), "image/png")
    title = "硅基崛起：第一篇"
    media_id = client.add_draft([news_article(cover["media_id"], title=title, content="<p>正文</p>")])

    sent = fake_platform.requests_to("draft/add")[0]
    assert title.encode("utf-8") in sent["body"]
    assert b"\\u" not in sent["body"]
    assert sent["content_type"] == "application/json; charset=utf-8"
    # draft/get answers text/plain without a charset: the client must decode UTF-8 itself
    got = client.get_draft(media_id)
    assert got["news_item"][0]["title"] == title
    assert got["news_item"][0]["content"] == "<p>正文</p>"


def test_add_material_uploads_a_multipart_media_file(client, fake_platform):
    data = png_bytes()
    result = client.add_material_image("封面 cover.png", data, "image/png")

    sent = fake_platform.requests_to("material/add_material")[0]
    assert sent["query"]["type"] == "image"
    assert sent["files"]["media"]["data"] == data
    assert sent["files"]["media"]["filename"] == "cover.png"
    assert sent["files"]["media"]["content_type"] == "image/png"
    assert fake_platform.materials[result["media_id"]]["data"] == data
    assert requests.get(result["url"], timeout=5).content == data


@pytest.mark.parametrize(
    "name, sent_name",
    [
        ("封面.png", "image.png"),  # CJK letters only: the extension must survive the cleaning
        ("MEDIA_3fA9", "MEDIA_3fA9.png"),  # a synced material named by its media_id has none
        ("photo.JPG", "photo.png"),  # the bytes decide, not the stored name
        (None, "image.png"),
    ],
)
def test_material_upload_name_ends_in_the_images_own_extension(client, fake_platform, name, sent_name):
    result = client.add_material_image(name, png_bytes(), "application/octet-stream")

    sent = fake_platform.requests_to("material/add_material")[-1]["files"]["media"]
    assert (sent["filename"], sent["content_type"]) == (sent_name, "image/png")
    assert fake_platform.materials[result["media_id"]]["name"] == sent_name


def test_body_image_upload_name_keeps_its_extension(client, fake_platform):
    client.upload_body_image("插图", png_bytes())
    assert fake_platform.requests_to("media/uploadimg")[-1]["files"]["media"]["filename"] == "image.png"


@pytest.mark.parametrize(
    "path, name",
    [("material/add_material", "png"), ("material/add_material", "cover.webp"), ("media/uploadimg", "a.gif")],
)
def test_fake_refuses_an_upload_named_without_an_image_extension(client, fake_platform, path, name):
    answer = requests.post(
        f"{fake_platform.base_url}/cgi-bin/{path}",
        params={"type": "image", "access_token": client.access_token()},
        files={"media": (name, png_bytes(), "image/png")},
        timeout=5,
    ).json()
    assert answer["errcode"] == 40113


def test_uploadimg_gets_a_too_big_jpeg_down_to_one_megabyte(client, fake_platform):
    big = encoded(noise_image((1600, 1200)), "JPEG", quality=95)
    assert len(big) > MB

    url = client.upload_body_image("photo.jpg", big, "image/jpeg")

    sent = fake_platform.requests_to("media/uploadimg")[0]["files"]["media"]
    assert len(sent["data"]) <= MB
    assert sent["filename"] == "photo.jpg"
    assert Image.open(io.BytesIO(sent["data"])).format == "JPEG"
    assert requests.get(url, timeout=5).content == sent["data"]


def test_uploadimg_converts_a_gif(client, fake_platform):
    gif = encoded(Image.new("RGB", (50, 40), (0, 128, 255)).convert("P"), "GIF")
    raw = requests.post(
        f"{fake_platform.base_url}/cgi-bin/media/uploadimg",
        params={"access_token": client.access_token()},
        files={"media": ("a.png", gif, "image/png")},
        timeout=5,
    ).json()
    assert raw["errcode"] == 40005  # the platform itself refuses a GIF, whatever its name

    url = client.upload_body_image("anim.gif", gif, "image/gif")

    sent = fake_platform.requests_to("media/uploadimg")[-1]["files"]["media"]
    assert sent["filename"] == "anim.png"
    assert sent["content_type"] == "image/png"
    assert Image.open(io.BytesIO(sent["data"])).size == (50, 40)
    assert url.startswith(fake_platform.base_url + "/mmbiz/")


def test_fake_uploadimg_refuses_more_than_one_megabyte(client, fake_platform):
    big = encoded(noise_image((1600, 1200)), "JPEG", quality=95)
    raw = requests.post(
        f"{fake_platform.base_url}/cgi-bin/media/uploadimg",
        params={"access_token": client.access_token()},
        files={"media": ("a.jpg", big, "image/jpeg")},
        timeout=5,
    ).json()
    assert raw["errcode"] == 40009
    missing = requests.post(
        f"{fake_platform.base_url}/cgi-bin/material/add_material",
        params={"access_token": client.access_token(), "type": "image"},
        files={"other": ("a.png", png_bytes(), "image/png")},
        timeout=5,
    ).json()
    assert missing["errcode"] == 41005


# ---- drafts ---------------------------------------------------------------------------------------
def test_draft_add_update_get(client, fake_platform):
    cover = client.add_material_image("c.png", png_bytes(), "image/png")
    media_id = client.add_draft([news_article(cover["media_id"], title="First")])
    assert fake_platform.drafts[media_id]["articles"][0]["title"] == "First"

    client.update_draft(media_id, 0, news_article(cover["media_id"], title="Second"))

    sent = fake_platform.requests_to("draft/update")[0]["json"]
    assert sent["media_id"] == media_id and sent["index"] == 0
    assert isinstance(sent["articles"], dict)
    assert client.get_draft(media_id)["news_item"][0]["title"] == "Second"


def test_update_of_an_unknown_draft_is_40007(client, fake_platform):
    cover = client.add_material_image("c.png", png_bytes(), "image/png")
    with pytest.raises(PlatformError) as caught:
        client.update_draft("DRAFT_gone", 0, news_article(cover["media_id"]))
    assert caught.value.errcode == 40007
    assert str(caught.value) == "platform error 40007: invalid media_id"  # rid kept apart
    assert caught.value.rid
    assert len(fake_platform.requests_to("draft/update")) == 1


@pytest.mark.parametrize(
    "fields, errcode, message",
    [
        ({"title": "t" * 65}, 45003, "title size out of limit"),
        ({"content": ""}, 44004, "empty content"),
        ({"thumb_media_id": "MEDIA_unknown"}, 40007, "invalid media_id"),
    ],
)
def test_draft_add_rejections_are_readable(client, fields, errcode, message):
    cover = client.add_material_image("c.png", png_bytes(), "image/png")
    with pytest.raises(PlatformError) as caught:
        client.add_draft([{**news_article(cover["media_id"]), **fields}])
    assert (caught.value.errcode, str(caught.value)) == (errcode, f"platform error {errcode}: {message}")


def test_newspic_draft_fields(client, fake_platform):
    images = [client.add_material_image(f"{i}.png", png_bytes(color=(i, 0, 0)), "image/png") for i in range(3)]
    article = {
        "article_type": "newspic",
        "title": "图片消息",
        "content": "一段描述",
        "need_open_comment": 1,
        "only_fans_can_comment": 0,
        "image_info": {"image_list": [{"image_media_id": m["media_id"]} for m in images]},
        "cover_info": {"crop_percent_list": [{"ratio": "3_4", "x1": "0.125", "y1": "0", "x2": "0.875", "y2": "1"}]},
    }
    media_id = client.add_draft([article])

    stored = fake_platform.drafts[media_id]["articles"][0]
    assert stored == article
    assert (
        client.get_draft(media_id)["news_item"][0]["image_info"]["image_list"][2]["image_media_id"]
        == images[2]["media_id"]
    )

    bad_crop = dict(
        article, cover_info={"crop_percent_list": [{"ratio": "3_4", "x1": 0.1, "y1": 0, "x2": 0.9, "y2": 1}]}
    )  # numbers, not strings
    with pytest.raises(PlatformError) as caught:
        client.add_draft([bad_crop])
    assert caught.value.errcode == 47003
    with pytest.raises(PlatformError) as caught:
        client.add_draft([dict(article, need_open_comment=True)])
    assert caught.value.errcode == 47003


# ---- materials ------------------------------------------------------------------------------------
def test_image_materials_are_listed_page_by_page(client, fake_platform):
    seeded = {
        fake_platform.seed_image_material(f"img-{i}.png", png_bytes(color=(i, i, i)))["media_id"] for i in range(45)
    }
    fake_platform.seed_image_material("other.png", png_bytes(), appid="wx-someone-else")

    items = list(client.iter_image_materials(page_size=20))

    assert {item["media_id"] for item in items} == seeded
    assert len(items) == 45
    assert set(items[0]) == {"media_id", "name", "update_time", "url"}
    assert [r["json"]["offset"] for r in fake_platform.requests_to("batchget_material")] == [0, 20, 40]
    assert all(
        r["json"]["type"] == "image" and r["json"]["count"] == 20
        for r in fake_platform.requests_to("batchget_material")
    )
    page = client.batchget_images(40, 20)
    assert (page["total_count"], page["item_count"], len(page["item"])) == (45, 5, 5)


# ---- failures --------------------------------------------------------------------------------------
def test_a_hanging_platform_times_out(fake_platform, database):
    client = PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url, timeout=1)
    token = client.access_token()
    fake_platform.hang_next("draft/get", 10)

    started = time.monotonic()
    with pytest.raises(PlatformError) as caught:
        client.get_draft("DRAFT_x")
    elapsed = time.monotonic() - started

    assert str(caught.value) == "platform unreachable: timed out after 1 s (draft/get)"
    assert caught.value.errcode is None
    assert elapsed < 5  # the fake would answer only after 10 s
    assert len(fake_platform.requests_to("draft/get")) == 1
    assert token not in "".join(traceback.format_exception(caught.value))


def _token_then_trickled_headers(conn, stopping):
    """A token at once; then, on the same kept-alive connection, the next answer's headers a byte each 0.2 s
    (10 s in all, each byte well within the read timeout)."""
    conn.recv(65536)
    token = b'{"access_token": "TOKEN-trickle", "expires_in": 7200}'
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(token), token)
    )
    conn.recv(65536)
    for byte in b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 40:
        if stopping.wait(0.2):
            return
        conn.sendall(bytes([byte]))
    conn.sendall(b"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")


def test_a_call_is_bounded_as_a_whole_even_when_each_read_is_quick(database):
    """requests' read timeout is per socket read: headers trickled a byte at a time held the old call for as long
    as they came. The whole call is now bounded by the connect and read timeouts together."""
    server = ScriptedServer(_token_then_trickled_headers)
    try:
        client = PlatformClient(ACCOUNT, APPID, SECRET, f"http://127.0.0.1:{server.port}", timeout=(0.5, 2))
        client.access_token()
        started = time.monotonic()
        with pytest.raises(PlatformError) as caught:
            client.publish_status("2247483647")
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    assert str(caught.value) == "platform unreachable: no complete answer within 2.5 s (freepublish/get)"
    assert elapsed < 5, elapsed  # the headers would have taken 10 s


def test_http_500_and_non_json_answers_are_platform_errors(client, fake_platform):
    client.access_token()
    fake_platform.fail_next("draft/add", status=500, body="<html>Internal Server Error</html>")
    with pytest.raises(PlatformError) as caught:
        client.add_draft([news_article("MEDIA_x")])
    assert str(caught.value) == "platform error: HTTP 500 from draft/add"
    assert len(fake_platform.requests_to("draft/add")) == 1

    fake_platform.fail_next("draft/get", status=200, body="<html>gateway page</html>")
    with pytest.raises(PlatformError) as caught:
        client.get_draft("DRAFT_x")
    assert str(caught.value).startswith("platform error: draft/get answered with something other than JSON")
    assert caught.value.errcode is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("[" * 100_000, "the JSON document is nested too deeply (more than 64 levels)"),
        ('{"media_id": NaN}', "NaN is not JSON"),
        ('{"media_id": "m", "n": 1e400}', "the number 1e400 is too large"),
        (
            '{"media_id": "\\ud800"}',
            "unpaired surrogate \\ud800 in media_id; a \\ud800-\\udfff escape must be half of a pair",
        ),
    ],
)
def test_an_answer_the_strict_reader_refuses_is_a_failed_call_in_words(client, fake_platform, body, reason):
    """docs/api.md §5: every answer goes through the client input's strict reader; before, 100,000 '['
    escaped as a RecursionError (and left an edition `sending` until its lease)."""
    client.access_token()
    fake_platform.fail_next("draft/add", status=200, body=body, content_type="application/json")
    with pytest.raises(PlatformError) as caught:
        client.add_draft([news_article("MEDIA_x")])
    assert str(caught.value) == f"platform error: draft/add answered a body that cannot be read as JSON: {reason}"
    assert caught.value.errcode is None


def test_an_unreachable_platform_is_named(database):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = PlatformClient(ACCOUNT, APPID, SECRET, f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(PlatformError) as caught:
        client.access_token()
    assert str(caught.value) == f"platform unreachable: cannot connect to 127.0.0.1:{port} (stable_token)"
    assert SECRET not in "".join(traceback.format_exception(caught.value))


def test_secrets_never_reach_messages_or_logs(client, fake_platform, caplog):
    caplog.set_level("DEBUG")
    token = client.access_token()
    fake_platform.fail_next(
        "draft/get", errcode=40164, errmsg=f"invalid ip, not in whitelist, access_token={token} secret={SECRET}"
    )
    with pytest.raises(PlatformError) as caught:
        client.get_draft("DRAFT_x")
    fake_platform.hang_next("draft/add", 2)
    slow = PlatformClient(ACCOUNT, APPID, SECRET, fake_platform.base_url, timeout=0.5)
    with pytest.raises(PlatformError) as timed_out:
        slow.add_draft([news_article("MEDIA_x")])

    texts = ["".join(traceback.format_exception(e)) for e in (caught.value, timed_out.value)]
    # every log line but peewee's DEBUG query log, which shows stored values like any column
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("peewee"))
    assert "/cgi-bin/draft/get" in logged  # urllib3 logged the request line (token masked)
    texts += [logged, repr(client), caught.value.errmsg]
    assert caught.value.errcode == 40164
    assert "access_token=***" in str(caught.value)
    for text in texts:
        assert token not in text
        assert SECRET not in text


def test_missing_credentials_are_named():
    config = {
        "WECHAT_SILICON_RISE_APPID": APPID,
        "WECHAT_SILICON_RISE_SECRET": SECRET,
        "WECHAT_CARBON_FITNESS_APPID": "wx-carbon",
    }
    with pytest.raises(PlatformError) as caught:
        client_for("carbon-fitness", Settings.with_defaults(config))
    assert str(caught.value) == "account carbon-fitness has no platform credentials configured"
    assert caught.value.errcode is None

    silicon = client_for("silicon-rise", Settings.with_defaults(config))
    assert (silicon.account, silicon.appid, silicon.base_url) == (ACCOUNT, APPID, "https://api.weixin.qq.com")
    assert silicon.timeout == 20  # WECHAT_TIMEOUT_SECONDS' default
    custom = client_for(
        "silicon-rise",
        Settings.with_defaults({**config, "WECHAT_API_BASE": "http://127.0.0.1:9100/", "WECHAT_TIMEOUT_SECONDS": 3}),
    )
    assert (custom.base_url, custom.timeout) == ("http://127.0.0.1:9100", 3)  # every caller, the CLI's sync too


# ---- upload cache ------------------------------------------------------------------------------------
def test_upload_cache_per_asset_account_and_kind(database):
    assert cached_upload("asset1", ACCOUNT, "material") is None
    remember_upload("asset1", ACCOUNT, "material", media_id="M1", url="http://x/1.png")
    remember_upload("asset1", ACCOUNT, "uploadimg", url="http://x/body.png")
    remember_upload("asset1", "carbon-fitness", "material", media_id="M2")

    assert cached_upload("asset1", ACCOUNT, "material").media_id == "M1"
    assert cached_upload("asset1", ACCOUNT, "uploadimg").url == "http://x/body.png"
    assert cached_upload("asset1", "carbon-fitness", "material").media_id == "M2"

    row = remember_upload("asset1", ACCOUNT, "material", media_id="M3", url="http://x/3.png")
    assert (row.media_id, row.url) == ("M3", "http://x/3.png")
    assert PlatformUpload.select().count() == 3

    forget_upload("asset1", ACCOUNT, "material")
    assert cached_upload("asset1", ACCOUNT, "material") is None
    assert cached_upload("asset1", ACCOUNT, "uploadimg") is not None
    with pytest.raises(ValueError):
        remember_upload("asset1", ACCOUNT, "video", media_id="x")


# ---- standalone fake ---------------------------------------------------------------------------------
def test_fake_runs_standalone_and_prints_its_settings():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WECHAT_")}
    env["WECHAT_CARBON_FITNESS_SECRET"] = "from-env"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakeplatform", "--port", str(port)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(9)]
        exports = dict(line.strip().removeprefix("export ").split("=", 1) for line in lines if "export" in line)
        assert exports == {
            "WECHAT_API_BASE": f"http://127.0.0.1:{port}",
            "WECHAT_SILICON_RISE_APPID": "wx-silicon-rise",
            "WECHAT_SILICON_RISE_SECRET": "secret-silicon-rise",
            "WECHAT_CARBON_FITNESS_APPID": "wx-carbon-fitness",
            "WECHAT_CARBON_FITNESS_SECRET": "from-env",
            # synced library images live on the fake: the package download may fetch them there
            "REVIEW_REMOTE_IMAGE_HOSTS": "127.0.0.1",
            "REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE": "true",
        }
        wait_until(lambda: listening(port), 10, "the fake did not start")
        answer = requests.post(
            f"http://127.0.0.1:{port}/cgi-bin/stable_token",
            timeout=2,
            data=json.dumps({"grant_type": "client_credential", "appid": "wx-carbon-fitness", "secret": "from-env"}),
        )
        assert answer.json()["expires_in"] == 7200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _answer_next(fake, path, answer):
    fake.fail_next(path, status=200, body=json.dumps(answer), content_type="application/json")


def test_a_token_said_to_last_for_ever_is_held_to_a_day(client, fake_platform):
    """stable_token's expires_in is the platform's 7200; 10^12 made the token's expiry past year 9999, an
    OverflowError out of every call that fetched a token (a 500 on GET /api/editions/tags)."""
    _answer_next(fake_platform, "stable_token", {"access_token": "tok-long", "expires_in": 10**12})
    assert client.access_token() == "tok-long"
    with db.connection_context():
        expires = PlatformToken.get(PlatformToken.account == ACCOUNT).expires_at
    assert iso(utcnow() + timedelta(hours=23)) < expires <= iso(utcnow() + timedelta(days=1))


@pytest.mark.parametrize("errcode", [[40001], {"code": 40001}])
def test_an_errcode_that_is_not_a_number_is_a_failed_call(client, fake_platform, errcode):
    """An errcode the platform never writes (a list, an object) is a PlatformError without a code; it was a
    TypeError (unhashable) out of the token check, a 500 or a publish job failed by an unexpected error."""
    client.access_token()
    _answer_next(fake_platform, "draft/add", {"errcode": errcode, "errmsg": "odd"})
    with pytest.raises(PlatformError) as caught:
        client.add_draft([news_article("MEDIA_x")])
    assert caught.value.errcode is None and "odd" in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        {"total_count": "abc", "item": []},
        {"total_count": [1], "item": []},
        {"total_count": 1, "item": {"a": 1}},
        {"total_count": 1, "item": "abc"},
        {"total_count": 1, "item": ["x"]},
    ],
)
def test_a_material_page_of_the_wrong_shape_is_a_failed_call(client, fake_platform, answer):
    """`assets sync` read a page's counts with int() and its items with .get(): a traceback out of the command."""
    client.access_token()
    _answer_next(fake_platform, "material/batchget_material", answer)
    with pytest.raises(PlatformError, match="answered a page that is not a count and a list"):
        list(client.iter_image_materials())


@pytest.mark.parametrize("media_id", [["m"], 7, {"a": 1}, "M" * 129])
def test_an_id_that_is_not_one_is_a_failed_call(client, fake_platform, media_id):
    """draft/add's media_id is text the service stores in 128 characters: ["m"] was stored as "['m']", and a
    longer one written to PostgreSQL's varchar(128) would fail the job's last write."""
    client.access_token()
    _answer_next(fake_platform, "draft/add", {"media_id": media_id})
    with pytest.raises(PlatformError, match="draft/add answered a media_id that is not one"):
        client.add_draft([news_article("MEDIA_x")])


def test_an_image_address_that_is_not_text_is_a_failed_call(client, fake_platform):
    client.access_token()
    _answer_next(fake_platform, "media/uploadimg", {"url": {"a": 1}})
    with pytest.raises(PlatformError, match="uploadimg answered a url that is not one"):
        client.upload_body_image("a.png", png_bytes((8, 8)), "image/png")


def test_a_deadline_ended_before_its_timer_fires_cuts_nothing_and_says_nothing():
    """end() and the timer can cross: an attempt that finished in time was reported cut off at its deadline."""
    left, right = socket.socketpair()
    try:
        deadline = Deadline(60)
        deadline.watch(lambda: left)
        deadline.end()
        deadline._cut()  # the timer, already firing as end() cancelled it
        assert not deadline.expired.is_set()
        left.sendall(b"still open")
        assert right.recv(16) == b"still open"
    finally:
        left.close()
        right.close()
