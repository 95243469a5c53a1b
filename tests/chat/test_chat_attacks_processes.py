"""The chat callbacks attacked against a real `python app.py` (docs/api.md §22): bodies the strict reader refuses
are a 400 in the error's shape with the toast in the team's language, and spend no nonce; a captured WeCom query
replays neither with timestamp and nonce swapped nor with a parameter given twice."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import requests

from fakeplatform.chatapps import feishu_encrypt, feishu_signature, post_feishu, wecom_event_xml, wecom_request
from tests.helpers.chat import FEISHU_KEY, FEISHU_TOKEN, WECOM_KEY, WECOM_TOKEN, chat_settings
from tests.helpers.live_processes import AGENT, process_settings, service
from tests.helpers.review import article_payload, png_bytes

ROOT = Path(__file__).resolve().parents[2]
# The catalogue's zh-CN words: the team's language is the default.
UNREADABLE, STALE = "已拒绝：无法读取这个请求。", "卡片发出后任务已有变化，请打开任务查看。"


def _task(base):
    """A waiting article whose every field has one candidate: one tap would approve it."""
    cover = requests.post(
        f"{base}/api/assets/upload",
        headers=AGENT,
        timeout=30,
        files={"file": ("cover.png", png_bytes(900, 500), "image/png")},
    ).json()
    payload = article_payload([cover["url"]], topic="一个问题")
    payload["candidates"].update(
        titles=["一个问题"], summaries=["摘要"], bodyOptions=[payload["candidates"]["bodyOptions"][0]]
    )
    answer = requests.post(f"{base}/api/review/agent/tasks", json=payload, headers=AGENT, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


def _feishu(chat_apps, url, plain: str, timestamp: str, nonce: str):
    """POST `plain` (the callback's JSON as text, so it can say what json.dumps never writes) sealed and signed."""
    body = json.dumps({"encrypt": feishu_encrypt(FEISHU_KEY, plain.encode())}).encode()
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": feishu_signature(timestamp, nonce, FEISHU_KEY, body),
    }
    return post_feishu(url, body, headers)


def _status(base, session, task):
    return session.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()["status"]


def test_unreadable_callbacks_and_replayed_queries_change_nothing(tmp_path, fake, chat_apps):
    settings = {**process_settings("", fake), **chat_settings(chat_apps)}
    with service(tmp_path, settings) as (base, session, _process):
        task = _task(base)
        _link(tmp_path, settings, "--feishu", "ou_li")
        url = f"{base}/feishu/card"
        # 1,000-deep nesting, no credentials needed: a 400 in words, not a 500.
        status, answer = post_feishu(url, b"[" * 1000 + b"]" * 1000, {"Content-Type": "application/json"})
        assert status == 400 and answer["error"]["code"] == "validation_error", answer
        assert answer["toast"] == {"type": "error", "content": UNREADABLE}
        # Signed clicks by a linked editor the strict reader refuses (a version past float's range, a lone
        # surrogate in the note, once a 500 with the nonce spent) are a 400 and leave their (timestamp, nonce)
        # free: a click with it is taken after them.
        stale = {"taskId": task["id"], "action": "approve_without_publish", "version": 0}
        harmless = json.dumps(chat_apps.feishu_callback_body("om_1", stale, "ou_li", FEISHU_TOKEN))
        value = {"taskId": task["id"], "action": "reject_rework", "version": task["version"]}
        click = json.dumps(chat_apps.feishu_callback_body("om_1", value, "ou_li", FEISHU_TOKEN, {"note": "NOTE"}))
        for nonce, bad in (
            ("n-range", click.replace(f'"version": {task["version"]}', '"version": 1e400')),
            ("n-surrogate", click.replace('"NOTE"', '"\\ud800"')),
        ):
            stamp = str(int(time.time()))
            status, answer = _feishu(chat_apps, url, bad, stamp, nonce)
            assert status == 400 and answer["error"]["code"] == "validation_error", (nonce, answer)
            assert answer["toast"]["content"] == UNREADABLE
            status, answer = _feishu(chat_apps, url, harmless, stamp, nonce)
            assert (status, answer["toast"]) == (200, {"type": "error", "content": STALE}), (nonce, answer)
            status, answer = _feishu(chat_apps, url, harmless, stamp, nonce)
            assert status == 403 and answer["error"]["code"] == "forbidden"  # now it is spent
            assert "飞书" in answer["toast"]["content"]
        assert _status(base, session, task) == "pending_review"
        # WeCom: li clicks approve before being linked in WeCom (answered, changes nothing)...
        key = f"approve_without_publish:{task['id']}:{task['version']}"
        xml = wecom_event_xml(chat_apps.corp_id, "li", key, task["id"], "code-1", chat_apps.agent_id)
        now = int(time.time())
        query, body = wecom_request(
            xml, WECOM_TOKEN, WECOM_KEY, chat_apps.corp_id, chat_apps.agent_id, str(now), str(now + 1)
        )
        events = f"{base}/wecom/events"
        assert requests.post(events, params=query, data=body, timeout=10).status_code == 200
        _link(tmp_path, settings, "--wecom", "li")
        # ...then the captured query, timestamp and nonce swapped, signs the same and is as taken.
        swapped = {**query, "timestamp": query["nonce"], "nonce": query["timestamp"]}
        assert requests.post(events, params=swapped, data=body, timeout=10).status_code == 403
        # A parameter given twice is refused, whichever copy is signed.
        query, body = wecom_request(xml, WECOM_TOKEN, WECOM_KEY, chat_apps.corp_id, chat_apps.agent_id)
        twice = [*query.items(), ("timestamp", "1700000000")]
        assert requests.post(events, params=twice, data=body, timeout=10).status_code == 403
        assert _status(base, session, task) == "pending_review"
        # The same click, sent once as the platform does, decides: the refusals above were what kept it waiting.
        assert requests.post(events, params=query, data=body, timeout=10).status_code == 200
        assert _status(base, session, task) == "approved"


def _link(tmp_path, settings, *identity):
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        **settings,
    }
    linked = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "link-chat", "admin", *identity],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert linked.returncode == 0, linked.stderr
