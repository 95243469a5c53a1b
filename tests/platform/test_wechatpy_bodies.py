"""The service's request bodies against wechatpy's for the same content (docs/api.md §5 "Documents, samples
and this service"): both clients call the fake platform over real HTTP, and the fake keeps what each sent.
Every call the service makes that wechatpy 2.0 has: draft/add, /update (index from 0) and /get, freepublish/
submit and /get, message/mass/preview, /sendall and /get, tags/get, media/uploadimg, material/add_material and
/batchget_material (it has no datacube/getarticletotaldetail and no stable_token).
wechatpy (a mature SDK, test extra) has no image post (newspic) draft: that body is checked against the
draft/add page's fields in tests/platform/test_fake_samples.py only."""

import pytest
from wechatpy import WeChatClient
from wechatpy.exceptions import WeChatClientException

from fakeplatform import FakePlatform
from fakeplatform.drafts import stored_article
from models.base import db, init_database
from models.platform import PlatformToken, PlatformUpload
from services.platform.client import PlatformClient, PlatformError
from tests.helpers.review import png_bytes
from tests.helpers.waiting import wait_until

APPID, SECRET = "wx-silicon-rise", "secret-silicon-rise-0123456789"


@pytest.fixture
def fake():
    platform = FakePlatform({APPID: SECRET})
    platform.mass_quota_per_day = 10
    platform.start()
    yield platform
    platform.stop()


@pytest.fixture
def service(fake, tmp_path):
    init_database(sqlite_path=str(tmp_path / "t.db"))
    db.create_tables([PlatformToken, PlatformUpload])
    yield PlatformClient("silicon-rise", APPID, SECRET, fake.base_url, timeout=(2, 5))
    db.close()


@pytest.fixture
def sdk(fake, service):
    client = WeChatClient(APPID, SECRET, access_token=service.access_token())
    client.API_BASE_URL = f"{fake.base_url}/cgi-bin/"
    return client


def last(fake, path, count=2):
    """The last `count` requests to `path`: the service's, then wechatpy's."""
    found = fake.requests_to(path)[-count:]
    assert len(found) == count, found
    return found


def quietly(call):
    """wechatpy raises on a refusal (a repeated clientmsgid); the request it sent is what is compared."""
    try:
        call()
    except WeChatClientException:
        pass


def test_draft_add_of_an_article_is_wechatpys(fake, service, sdk):
    thumb = service.add_material_image("cover.png", png_bytes(900, 500), "image/png")["media_id"]
    article = {
        "title": "芯片的未来",
        "author": "作者",
        "digest": "摘要",
        "content": "<p>正文</p>",
        "thumb_media_id": thumb,
    }
    service.add_draft([article])
    sdk.draft.add([article])
    ours, theirs = (r["json"]["articles"] for r in last(fake, "draft/add"))
    # wechatpy writes the platform's defaults (empty source URL, comments off); the service leaves them out:
    # the same article once the platform fills in its defaults (what draft/get gives back).
    assert [stored_article(a) for a in ours] == [stored_article(a) for a in theirs]
    assert set(ours[0]) <= set(theirs[0])


def test_freepublish_submit_is_wechatpys(fake, service, sdk):
    media_id = service.add_draft(
        [
            {
                "title": "t",
                "content": "<p>c</p>",
                "thumb_media_id": fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"],
            }
        ]
    )
    service.submit_publish(media_id)
    quietly(lambda: sdk.freepublish.submit(media_id))
    ours, theirs = last(fake, "freepublish/submit")
    assert ours["json"] == theirs["json"] == {"media_id": media_id}


def test_sendall_and_preview_are_wechatpys(fake, service, sdk):
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    media_id = service.add_draft([{"title": "t", "content": "<p>c</p>", "thumb_media_id": thumb}])
    service.send_preview(media_id, wechat_name="reviewer-wx")
    sdk.message.send_mass_article(media_id, "reviewer-wx", preview=True)
    service.send_preview(media_id, open_id="oAbCdEfGhIjKlMnOpQrStUvWxYz0")
    sdk.message.send_mass_article(media_id, "oAbCdEfGhIjKlMnOpQrStUvWxYz0", preview=True)
    previews = [r["json"] for r in fake.requests_to("message/mass/preview")]
    # wechatpy adds send_ignore_reprint to a preview, which the preview page does not name.
    assert [previews[0], previews[2]] == [
        {k: v for k, v in p.items() if k != "send_ignore_reprint"} for p in (previews[1], previews[3])
    ]
    service.mass_send(media_id, "edition-1", 100, True)
    quietly(
        lambda: sdk.message.send_mass_article(
            media_id, 100, is_to_all=False, send_ignore_reprint=1, client_msg_id="edition-1"
        )
    )
    ours, theirs = last(fake, "message/mass/sendall")
    assert ours["json"] == theirs["json"]
    other = service.add_draft([{"title": "t2", "content": "<p>c</p>", "thumb_media_id": thumb}])
    service.mass_send(other, "edition-2", None, False)
    quietly(lambda: sdk.message.send_mass_article(other, None, is_to_all=True, client_msg_id="edition-2"))
    ours, theirs = last(fake, "message/mass/sendall")
    # To everyone: wechatpy also writes "tag_id": null, which the page says is ignored with is_to_all.
    assert ours["json"] == {**theirs["json"], "filter": {"is_to_all": True}}


def test_tags_get_is_wechatpys(fake, service, sdk):
    assert service.follower_tags() == sdk.tag.get()
    ours, theirs = last(fake, "tags/get")
    assert (ours["method"], ours["body"], ours["query"].keys()) == (
        theirs["method"],
        theirs["body"],
        theirs["query"].keys(),
    )
    assert ours["method"] == "GET"


def test_uploads_are_wechatpys_multipart(fake, service, sdk):
    image = png_bytes(120, 80)
    service.upload_body_image("body.png", image)
    sdk.media.upload_image(("body.png", image, "image/png"))
    service.add_material_image("cover.png", image, "image/png")
    sdk.material.add("image", ("cover.png", image, "image/png"))
    for path in ("media/uploadimg", "material/add_material"):
        ours, theirs = last(fake, path)
        assert (list(ours["files"]), ours["form"]) == (list(theirs["files"]), theirs["form"]) == (["media"], {})
        assert {k: v for k, v in ours["query"].items() if k != "access_token"} == {
            k: v for k, v in theirs["query"].items() if k != "access_token"
        }
        assert ours["files"]["media"]["data"] == theirs["files"]["media"]["data"] == image


def test_a_draft_gone_is_the_same_refusal_for_both(fake, service, sdk):
    with pytest.raises(PlatformError) as ours:
        service.get_draft("DRAFT_UNKNOWN")
    with pytest.raises(WeChatClientException) as theirs:
        sdk.draft.get("DRAFT_UNKNOWN")
    assert ours.value.errcode == theirs.value.errcode == 40007


def test_draft_update_is_wechatpys_and_its_index_counts_from_0(fake, service, sdk):
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    first, second = ({"title": t, "content": f"<p>{t}</p>", "thumb_media_id": thumb} for t in ("one", "two"))
    media_id = service.add_draft([first, second])
    # The draft/update page and wechatpy both count `index` from 0: 1 is the second article.
    changed = {**second, "title": "two, changed"}
    service.update_draft(media_id, 1, changed)
    sdk.draft.update(media_id, 1, changed)
    ours, theirs = last(fake, "draft/update")
    assert ours["json"] == theirs["json"] == {"media_id": media_id, "index": 1, "articles": changed}
    titles = [a["title"] for a in service.get_draft(media_id)["news_item"]]
    assert titles == ["one", "two, changed"]
    service.update_draft(media_id, 0, {**first, "title": "one, changed"})  # the pipeline's: its draft's only one
    sdk.draft.update(media_id, 0, {**first, "title": "one, changed"})
    ours, theirs = last(fake, "draft/update")
    assert ours["json"] == theirs["json"] and ours["json"]["index"] == 0
    assert [a["title"] for a in sdk.draft.get(media_id)["news_item"]] == ["one, changed", "two, changed"]


def test_draft_get_is_wechatpys(fake, service, sdk):
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    media_id = service.add_draft([{"title": "t", "content": "<p>c</p>", "thumb_media_id": thumb}])
    assert service.get_draft(media_id) == sdk.draft.get(media_id)
    ours, theirs = last(fake, "draft/get")
    assert ours["json"] == theirs["json"] == {"media_id": media_id}


def test_freepublish_get_is_wechatpys(fake, service, sdk):
    fake.withhold_events = True
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    media_id = service.add_draft([{"title": "t", "content": "<p>c</p>", "thumb_media_id": thumb}])
    publish_id = service.submit_publish(media_id)["publish_id"]
    service.publish_status(publish_id)
    sdk.freepublish.get(publish_id)
    ours, theirs = last(fake, "freepublish/get")
    assert ours["json"] == theirs["json"] == {"publish_id": publish_id}


def test_mass_get_is_wechatpys(fake, service, sdk):
    fake.withhold_events = True
    fake.mass_seconds = 120  # SENDING for both readers (at 0.05 s a loaded machine saw it finish between them)
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    media_id = service.add_draft([{"title": "t", "content": "<p>c</p>", "thumb_media_id": thumb}])
    msg_id = str(service.mass_send(media_id, "edition-get", None, False)["msg_id"])  # the service keeps it as text
    assert service.mass_status(msg_id) == sdk.message.get_mass(msg_id)["msg_status"]
    ours, theirs = last(fake, "message/mass/get")
    assert ours["json"] == theirs["json"] == {"msg_id": msg_id}


def test_material_batchget_of_images_is_wechatpys(fake, service, sdk):
    for n in range(3):
        fake.seed_image_material(f"m{n}.png", png_bytes(9 + n, 9))
    assert service.batchget_images(1, 2)["item"] == sdk.material.batchget("image", 1, 2)["item"]
    ours, theirs = last(fake, "material/batchget_material")
    assert ours["json"] == theirs["json"] == {"type": "image", "offset": 1, "count": 2}
    assert [item["name"] for item in service.iter_image_materials(page_size=2)] == [
        item["name"] for page in (0, 2) for item in sdk.material.batchget("image", page, 2)["item"]
    ]


def test_the_comment_calls_are_wechatpys(fake, service, sdk):
    """wechatpy keeps the comment calls in its material API; its defaults (index 1, count 50) are not the
    documents' (index from 0, count under 50): both are given explicitly here
    (docs/api.md §5 "Documents, samples and this service")."""
    thumb = fake.seed_image_material("c.png", png_bytes(9, 9))["media_id"]
    submitted = service.submit_publish(
        service.add_draft([{"title": "t", "content": "<p>c</p>", "thumb_media_id": thumb}])
    )
    wait_until(lambda: service.publish_status(submitted["publish_id"])["publish_status"] == 0, 15, "never published")
    msg_data_id = submitted["msg_data_id"]
    first, second = fake.add_comments(msg_data_id, 0, 2)
    number = int(msg_data_id)
    pairs = [
        ("comment/open", lambda: service.open_comments(msg_data_id, 0), lambda: sdk.material.open_comment(number, 0)),
        (
            "comment/close",
            lambda: service.close_comments(msg_data_id, 0),
            lambda: sdk.material.close_comment(number, 0),
        ),
        (
            "comment/list",
            lambda: service.list_comments(msg_data_id, 0, 0, 49, 2),
            lambda: sdk.material.list_comment(number, 0, 0, 49, 2),
        ),
        (
            "comment/markelect",
            lambda: service.mark_elect(msg_data_id, 0, first),
            lambda: sdk.material.markelect_comment(number, 0, second),
        ),
        (
            "comment/unmarkelect",
            lambda: service.unmark_elect(msg_data_id, 0, first),
            lambda: sdk.material.unmarkelect_comment(number, 0, second),
        ),
        (
            "comment/reply/add",
            lambda: service.reply_comment(msg_data_id, 0, first, "谢谢"),
            lambda: sdk.material.add_reply_comment(number, 0, second, "谢谢"),
        ),
        (
            "comment/reply/delete",
            lambda: service.delete_reply(msg_data_id, 0, first),
            lambda: sdk.material.delete_reply_comment(number, 0, second),
        ),
        (
            "comment/delete",
            lambda: service.delete_comment(msg_data_id, 0, first),
            lambda: sdk.material.delete_comment(number, 0, second),
        ),
    ]
    for path, ours_call, theirs_call in pairs:
        ours_call()
        theirs_call()
        ours, theirs = last(fake, "/cgi-bin/" + path)
        assert ours["answer"]["errcode"] == theirs["answer"]["errcode"] == 0, path
        expected = (
            {**theirs["json"], "user_comment_id": first} if "user_comment_id" in theirs["json"] else theirs["json"]
        )
        assert ours["json"] == expected, path
