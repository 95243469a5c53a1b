"""`python app.py --demo` as a new user meets it (docs/api.md §1, §18, §21, §22): its banner counts the tasks
the list shows, today's send of the first account is still free on Send to followers, and what it prints is
enough to try each account's server URL (plaintext and safe mode) and the WeCom callback, while secrets from
the environment are never printed. One real demo process, driven over HTTP."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from fakeplatform.chatapps import FakeChatApps
from fakeplatform.freepublish import publish_event_xml, sha1_sorted, signed_push
from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1].parent
INSTANCE_SECRETS = {
    "WECHAT_SILICON_RISE_TOKEN": "instance-token-never-printed",
    "FEISHU_ENCRYPT_KEY": "instance-feishu-key-never-printed",
    "WECOM_SECRET": "instance-wecom-secret-never-printed",
    # A plaintext account's key from the environment: the demo sets every account's own (docs/api.md §1).
    "WECHAT_SILICON_RISE_AES_KEY": "InstanceAesKeyNeverPrintedNorUsed0123456789",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """(base URL, banner text) of a running demo; stopped at the end."""
    port = free_port()
    environment = {key: value for key, value in os.environ.items() if key not in ("HOST", "DATABASE_URL")}
    environment.update(INSTANCE_SECRETS, PORT=str(port), PYTHONUNBUFFERED="1")
    out = tmp_path_factory.mktemp("demo") / "out.txt"
    with out.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "app.py", "--demo"], cwd=ROOT, env=environment, stdout=sink, stderr=subprocess.DEVNULL
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers_ok(f"{base}/healthz"), 90, "the demo did not answer")
        wait_until(lambda: "  Readers " in out.read_text(), 30, "the demo printed no banner")
        yield base, out.read_text()
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def banner_value(banner, pattern):
    found = re.search(pattern, banner)
    assert found, (pattern, banner[:3000])
    return found.group(1)


def signed_in(base, banner):
    session = requests.Session()
    password = banner_value(banner, r"Password +(\S+)")
    answer = session.post(f"{base}/api/auth/login", data={"username": "demo", "password": password}, timeout=10)
    assert answer.status_code == 200, answer.text
    return session


def test_the_banner_counts_the_tasks_the_list_shows(demo):
    base, banner = demo
    said = int(banner_value(banner, r"Sample data (\d+) review tasks"))
    listed = signed_in(base, banner).get(f"{base}/api/review/tasks?status=all&limit=1000", timeout=10).json()
    assert said == len(listed) == 9, (said, len(listed))


def test_the_sample_edition_leaves_todays_send_free(demo):
    base, banner = demo
    session = signed_in(base, banner)
    [edition] = session.get(f"{base}/api/editions?account=silicon-rise", timeout=10).json()
    assert edition["status"] == "sent"
    page = session.get(f"{base}/editions?account=silicon-rise", timeout=10).text
    assert 'data-left="1"' in page, re.findall(r'<p id="quota-left".*?</p>', page, re.S)
    assert 'id="send-now"' in page and 'id="send-now" disabled' not in page.replace("\n", " ")


def test_the_banner_prints_what_a_tester_points_at_the_server_urls_and_safe_mode_works(demo):
    base, banner = demo
    plain = re.search(r"(\S+/wechat/silicon-rise/events) +AppID (\S+) +Token (\S+) +\(plaintext mode\)", banner)
    safe = re.search(
        r"(\S+/wechat/carbon-fitness/events) +AppID (\S+) +Token (\S+) +EncodingAESKey (\w{43}) +\(safe mode\)", banner
    )
    assert plain and safe, banner[:3000]
    # The server URL check (基本配置 → 服务器配置) with the printed token.
    url, _appid, token = plain.groups()
    query = {"timestamp": str(int(time.time())), "nonce": "4242", "echostr": "hello-demo"}
    query["signature"] = sha1_sorted(token, query["timestamp"], query["nonce"])
    answer = requests.get(url, params=query, timeout=10)
    assert (answer.status_code, answer.text) == (200, "hello-demo")
    # The safe-mode account takes an encrypted push made with the printed key and refuses plaintext.
    url, appid, token, key = safe.groups()
    xml = publish_event_xml("no-such-publish-id", 0, None, None)  # of no submission: answered, changes nothing
    assert signed_push(url, token, xml).status_code == 403
    answer = signed_push(url, token, xml, mode="aes", aes_key=key, appid=appid)
    assert (answer.status_code, answer.text) == (200, "success")


def test_the_banner_prints_the_chat_callbacks_and_the_wecom_check_passes(demo):
    base, banner = demo
    line = re.search(r"WeCom +(\S+/wecom/events) +Token (\S+) +EncodingAESKey (\w{43}) +CorpID (\S+)", banner)
    assert line and re.search(r"Feishu +\S+/feishu/card +Verification Token \S+ +Encrypt Key \S+", banner)
    url, token, key, corp_id = line.groups()
    status, answer, plain = FakeChatApps().verify_wecom_url(url, token, key, corp_id)
    assert (status, answer) == (200, plain)
    for secret in INSTANCE_SECRETS.values():  # the demo prints its own secrets, never the environment's
        assert secret not in banner


def test_an_aes_key_from_the_environment_is_neither_printed_nor_used(demo):
    """silicon-rise stays in plaintext mode (with the environment's key it would refuse a plaintext push, 403),
    and the key appears nowhere in the banner."""
    _base, banner = demo
    instance_key = INSTANCE_SECRETS["WECHAT_SILICON_RISE_AES_KEY"]
    assert instance_key not in banner
    url, _appid, token = banner_value_groups(
        banner, r"(\S+/wechat/silicon-rise/events) +AppID (\S+) +Token (\S+) +\(plaintext mode\)"
    )
    xml = publish_event_xml("no-such-publish-id", 0, None, None)  # of no submission: answered, changes nothing
    answer = signed_push(url, token, xml)
    assert (answer.status_code, answer.text) == (200, "success")


def banner_value_groups(banner, pattern):
    found = re.search(pattern, banner)
    assert found, (pattern, banner[:3000])
    return found.groups()


def test_the_live_article_has_readers_comments_one_with_a_proposal_waiting(demo):
    """docs/api.md §23: the demo's live article hears its readers, fetched from the fake platform; one
    comment is featured, one answered, and the newest waits with the agent's proposal, sent to nobody."""
    base, banner = demo
    url = banner_value(banner, r"  Comments    .*?: (\S+/comments)\b")
    task_id = banner_value(banner, r"  Readers .*?/review/(\S+);")
    assert url == f"{base}/api/review/tasks/{task_id}/comments"
    answer = signed_in(base, banner).get(url, timeout=10)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    comments = body["comments"]
    assert len(comments) == 5 and body["lastError"] is None and body["lastFetchedAt"]
    assert all(re.search(r"[\u4e00-\u9fff]", c["content"]) for c in comments)  # in Chinese
    assert [c["createdAt"] for c in comments] == sorted((c["createdAt"] for c in comments), reverse=True)
    assert sum(c["featured"] for c in comments) == 1
    assert [c["reply"]["by"] for c in comments if c["reply"]] == [None]  # answered in the back office
    newest = comments[0]
    assert newest["reply"] is None and [p["state"] for p in newest["proposals"]] == ["proposed"]
    assert not any(c["proposals"] for c in comments[1:])
    assert "openid" not in answer.text and "oReader" not in answer.text
