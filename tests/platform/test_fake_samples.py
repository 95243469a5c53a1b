"""The fake platform against the platform's own samples (fakeplatform/samples/, docs/api.md §5 "Documents,
samples and this service"): for every call the service makes, the fake is driven over real HTTP by the
service's own client and its answer must have each field of the sample, with the sample's JSON type (lists
by their first element); each event it pushes must have the sample event's elements. A new platform call
in the service without a sample and a check here fails `test_every_call_has_a_sample_and_a_check`."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fakeplatform.freepublish import beijing_day
from models import db
from services.platform.client import PlatformError, client_for
from tests.helpers.app import built_app
from tests.helpers.publishing import ACCOUNTS, platform_settings
from tests.helpers.review import live_server, png_bytes
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "fakeplatform" / "samples"
# Where the service talks to the platform (the chat apps' WeCom calls are another platform's).
SERVICE_AREAS = ("services/platform", "services/publishing", "services/live", "services/editions", "services/stats")
APPID = ACCOUNTS["silicon-rise"][0]
TOKEN = "sample-token-silicon-rise"


def calls_in_the_service():
    """Each platform path the service's code names (`/cgi-bin/draft/add` -> draft_add), the events it reads,
    and the server URL check it answers (services/live/events.py `verify`)."""
    found = set()
    for area in SERVICE_AREAS:
        for source in sorted((ROOT / area).rglob("*.py")):
            text = source.read_text(encoding="utf-8")
            for path in re.findall(r"[\"'](/(?:cgi-bin|datacube)/[a-z_/]+)[\"']", text):
                found.add(path.removeprefix("/cgi-bin/").removeprefix("/").replace("/", "_"))
            found.update(re.findall(r"\b(PUBLISHJOBFINISH|MASSSENDJOBFINISH)\b", text))
            if '"echostr"' in text:
                found.add("server_url_check")
    return found


def sample(name):
    """The sample's answer; stable_token's file keeps one per mode: the service asks in normal mode first."""
    kept = json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    return kept["answer_normal" if name == "stable_token" else "answer"]


def json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}[type(value)]


def shape_problems(answer, example, where="answer"):
    """Where `answer` lacks a field of `example` or has another JSON type there; lists by their first item."""
    if json_type(answer) != json_type(example):
        return [f"{where}: {json_type(answer)}, the sample has {json_type(example)}"]
    if isinstance(example, dict):
        problems = []
        for key, value in example.items():
            if key not in answer:
                problems.append(f"{where}.{key} missing")
            else:
                problems += shape_problems(answer[key], value, f"{where}.{key}")
        return problems
    if isinstance(example, list) and example:
        if not answer:
            return [f"{where}: empty, the sample has items"]
        return shape_problems(answer[0], example[0], f"{where}[0]")
    return []


def element_problems(pushed, example, where="xml"):
    """Where the pushed XML lacks an element of the sample's (repeated elements by their first), or writes
    text where the sample has a number."""
    problems = []
    text = (example.text or "").strip()
    if not list(example) and text.isdigit() and not (pushed.text or "").strip().lstrip("-").isdigit():
        problems.append(f"{where}: {pushed.text!r}, the sample has a number")
    for child in example:
        if child.tag in {c.tag for c in problems_seen(example, child)}:
            continue
        mine = pushed.find(child.tag)
        if mine is None:
            problems.append(f"{where}/{child.tag} missing")
        else:
            problems += element_problems(mine, child, f"{where}/{child.tag}")
    return problems


def problems_seen(parent, child):
    """The children of `parent` before `child` (a repeated element is compared once, by its first)."""
    before = []
    for other in parent:
        if other is child:
            return before
        before.append(other)
    return before


def sample_xml(name):
    return ET.fromstring((SAMPLES / f"{name}.xml").read_bytes())


@pytest.fixture
def app(make_app, fake):
    with built_app(make_app, **platform_settings(fake, WECHAT_SILICON_RISE_TOKEN=TOKEN)) as application:
        yield application


@pytest.fixture
def served(app, fake):
    """The service on a real HTTP server, silicon-rise's server URL, events pushed to it in plain mode."""
    with live_server(app) as base:
        fake.send_events_to(APPID, f"{base}/wechat/silicon-rise/events", TOKEN)
        yield base


@pytest.fixture
def client(app):
    with db.connection_context():
        yield client_for("silicon-rise", app.extensions["settings"])


def news(thumb_media_id, title="芯片的未来"):
    return {
        "title": title,
        "author": "作者",
        "digest": "摘要",
        "content": "<p>正文</p>",
        "thumb_media_id": thumb_media_id,
    }


def checked_calls(fake, client, served):
    """Every call driven as the service makes it; name -> (the fake's answer, the sample's answer)."""
    fake.mass_quota_per_day = 5
    pairs = {}
    client.access_token()  # no token stored yet: one stable_token call
    pairs["stable_token"] = fake.requests_to("/cgi-bin/stable_token")[-1]["answer"]
    material = client.add_material_image("cover.png", png_bytes(900, 500), "image/png")
    pairs["material_add_material"] = fake.requests_to("material/add_material")[-1]["answer"]
    client.upload_body_image("body.png", png_bytes(300, 200))
    pairs["media_uploadimg"] = fake.requests_to("media/uploadimg")[-1]["answer"]
    client.batchget_images(0, 20)
    pairs["material_batchget_material"] = fake.requests_to("material/batchget_material")[-1]["answer"]
    media_id = client.add_draft([news(material["media_id"])])
    pairs["draft_add"] = fake.requests_to("draft/add")[-1]["answer"]
    client.update_draft(media_id, 0, news(material["media_id"], "芯片的未来（改）"))
    pairs["draft_update"] = fake.requests_to("draft/update")[-1]["answer"]
    client.get_draft(media_id)
    pairs["draft_get"] = fake.requests_to("draft/get")[-1]["answer"]
    client.send_preview(media_id, wechat_name="reviewer-wx")
    pairs["message_mass_preview"] = fake.requests_to("message/mass/preview")[-1]["answer"]
    client.follower_tags()
    pairs["tags_get"] = fake.requests_to("tags/get")[-1]["answer"]
    sent = client.mass_send(client.add_draft([news(material["media_id"])]), "edition-1", None, False)
    pairs["message_mass_sendall"] = fake.requests_to("message/mass/sendall")[-1]["answer"]
    wait_until(lambda: client.mass_status(sent["msg_id"]) == "SEND_SUCCESS", 15, "the send never finished")
    pairs["message_mass_get"] = fake.requests_to("message/mass/get")[-1]["answer"]
    submitted = client.submit_publish(media_id)
    pairs["freepublish_submit"] = fake.requests_to("freepublish/submit")[-1]["answer"]
    wait_until(lambda: client.publish_status(submitted["publish_id"])["publish_status"] == 0, 15, "never published")
    pairs["freepublish_get"] = fake.requests_to("freepublish/get")[-1]["answer"]
    # Figures come for days already over (end_date at most the platform's yesterday): published two days ago.
    for record in list(fake.publishes.values()):
        fake.set_publish_day(record["msg_data_id"], beijing_day(-2))
    client.article_totals(beijing_day(-2))
    pairs["datacube_getarticletotaldetail"] = fake.requests_to("datacube/getarticletotaldetail")[-1]["answer"]
    # Readers' comments on the article just published (index 0): each call once, in an order that succeeds.
    msg_data_id = submitted["msg_data_id"]
    comment_id = fake.add_comment(msg_data_id, 0, "写得好")
    for name, call in (
        ("comment_open", lambda: client.open_comments(msg_data_id, 0)),
        ("comment_markelect", lambda: client.mark_elect(msg_data_id, 0, comment_id)),
        ("comment_reply_add", lambda: client.reply_comment(msg_data_id, 0, comment_id, "谢谢")),
        ("comment_list", lambda: client.list_comments(msg_data_id, 0, 0, 49)),
        ("comment_unmarkelect", lambda: client.unmark_elect(msg_data_id, 0, comment_id)),
        ("comment_reply_delete", lambda: client.delete_reply(msg_data_id, 0, comment_id)),
        ("comment_delete", lambda: client.delete_comment(msg_data_id, 0, comment_id)),
        ("comment_close", lambda: client.close_comments(msg_data_id, 0)),
    ):
        call()
        pairs[name] = comment_request(fake, name)["answer"]
    return {name: (answer, sample(name)) for name, answer in pairs.items()}


def comment_request(fake, name):
    """The last request the fake received for comment call `name` (comment_reply_add -> comment/reply/add)."""
    return fake.requests_to("/cgi-bin/" + name.replace("_", "/", 1).replace("reply_", "reply/"))[-1]


EVENTS = ("PUBLISHJOBFINISH", "MASSSENDJOBFINISH")
CHECKED = {
    "stable_token",
    "material_add_material",
    "media_uploadimg",
    "material_batchget_material",
    "draft_add",
    "draft_update",
    "draft_get",
    "message_mass_preview",
    "tags_get",
    "message_mass_sendall",
    "message_mass_get",
    "freepublish_submit",
    "freepublish_get",
    "datacube_getarticletotaldetail",
    "comment_list",
    "comment_open",
    "comment_close",
    "comment_markelect",
    "comment_unmarkelect",
    "comment_delete",
    "comment_reply_add",
    "comment_reply_delete",
    *EVENTS,
    "server_url_check",
}


def test_every_call_has_a_sample_and_a_check():
    assert calls_in_the_service() == CHECKED
    missing = [name for name in sorted(CHECKED) if not list(SAMPLES.glob(f"{name}.*"))]
    assert missing == [], f"no sample in fakeplatform/samples/ for {missing}"
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([A-Za-z0-9_]+\.(?:json|xml))`", readme))
    assert listed == {p.name for p in SAMPLES.iterdir() if p.suffix in (".json", ".xml")}


def test_the_fakes_answers_have_the_samples_fields_and_types(fake, client, served):
    problems = {}
    for name, (answer, example) in checked_calls(fake, client, served).items():
        problems[name] = shape_problems(answer, example)
    # draft/get's second sample item is an image post: the fake's newspic answer against it (product_info
    # is there only for a post that sells goods).
    images = [client.add_material_image(f"i{n}.png", png_bytes(600, 800), "image/png")["media_id"] for n in (1, 2)]
    post = {
        "article_type": "newspic",
        "title": "图片消息",
        "content": "文字",
        "image_info": {"image_list": [{"image_media_id": m} for m in images]},
    }
    newspic = client.get_draft(client.add_draft([post]))
    expected = {k: v for k, v in sample("draft_get")["news_item"][1].items() if k != "product_info"}
    problems["draft_get newspic"] = shape_problems(newspic["news_item"][0], expected, "answer.news_item[0]")
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_comment_requests_have_the_documents_fields_and_types(fake, client, served):
    """The service's comment bodies against the documents' request examples (msg_data_id and ids numbers)."""
    checked_calls(fake, client, served)
    problems = {}
    for name in sorted(n for n in CHECKED if n.startswith("comment_")):
        kept = json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        body = comment_request(fake, name)["json"]
        problems[name] = shape_problems(body, kept["request"], "request") + [
            f"request.{key} not in the documents" for key in body if key not in kept["request"]
        ]
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_events_the_fake_pushes_have_the_samples_elements(fake, client, served):
    material = client.add_material_image("cover.png", png_bytes(900, 500), "image/png")
    published = client.submit_publish(client.add_draft([news(material["media_id"])]))
    client.mass_send(client.add_draft([news(material["media_id"]), news(material["media_id"])]), "e-2", None, False)
    wait_until(lambda: len(fake.pushed_events) == 2, 15, "the fake pushed no events")
    pushed = {ET.fromstring(xml).findtext("Event"): ET.fromstring(xml) for xml in fake.pushed_events}
    assert sorted(pushed) == sorted(EVENTS)
    assert {name: element_problems(pushed[name], sample_xml(name)) for name in EVENTS} == {name: [] for name in EVENTS}
    assert pushed["PUBLISHJOBFINISH"].findtext("PublishEventInfo/publish_id") == published["publish_id"]


def test_the_server_url_check_is_the_samples(fake, served):
    example = sample("server_url_check")
    status, text, query = fake.check_server_url(APPID)
    assert sorted(query) == sorted(example["request"]["query"])
    assert (status, text) == (200, query["echostr"])


def test_a_published_or_sent_draft_is_gone_as_the_sample_says(fake, client, served):
    """The platform removes a draft once published or mass-sent (fakeplatform/samples/draft_deleted.json)."""
    gone = sample("draft_deleted")
    material = client.add_material_image("cover.png", png_bytes(900, 500), "image/png")
    published, sent = client.add_draft([news(material["media_id"])]), client.add_draft([news(material["media_id"])])
    submitted = client.submit_publish(published)
    client.mass_send(sent, "e-3", None, False)
    wait_until(lambda: published not in fake.drafts and sent not in fake.drafts, 15, "the drafts stayed")
    assert client.publish_status(submitted["publish_id"])["publish_status"] == 0
    for media_id in (published, sent):
        for call in (
            lambda: client.get_draft(media_id),
            lambda: client.update_draft(media_id, 0, news(material["media_id"])),
            lambda: client.send_preview(media_id, wechat_name="reviewer-wx"),
            lambda: client.submit_publish(media_id),
        ):
            with pytest.raises(PlatformError) as refused:
                call()
            assert refused.value.errcode == gone["errcode"] and refused.value.errmsg == gone["errmsg"]
