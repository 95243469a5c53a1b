"""Deciding from the team's chat against a real `python app.py` (docs/api.md §22): the card comes, one tap
approves and publishes (answered at once, the card redrawn once the draft exists), and a task decided on
the page has its cards updated."""

import os
import subprocess
import sys
import time
from pathlib import Path

import requests

from fakeplatform.chatapps import feishu_request, post_feishu
from tests.helpers.chat import FEISHU_KEY, FEISHU_TOKEN, WECOM_KEY, WECOM_TOKEN, chat_settings, wait_for
from tests.helpers.live_processes import AGENT, process_settings, service
from tests.helpers.review import article_payload, png_bytes

ROOT = Path(__file__).resolve().parents[2]


def _one_option_task(base):
    cover = requests.post(
        f"{base}/api/assets/upload",
        headers=AGENT,
        timeout=30,
        files={"file": ("cover.png", png_bytes(900, 500), "image/png")},
    ).json()
    payload = article_payload([cover["url"]], topic="一个问题")
    payload["candidates"].update(
        titles=["一个问题"],
        summaries=["摘要"],
        authors=["硅基君"],
        bodyOptions=[payload["candidates"]["bodyOptions"][0]],
    )
    answer = requests.post(f"{base}/api/review/agent/tasks", json=payload, headers=AGENT, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


def _card_of(chat_apps, task):
    return next((m for m in chat_apps.feishu_messages if task["id"] in str(chat_apps.feishu_cards[m]["card"])), None)


def test_a_card_decides_a_task_in_a_running_service(tmp_path, fake, chat_apps):
    settings = {
        **process_settings("", fake),
        **chat_settings(chat_apps),
        "WEBHOOK_SENDER_ENABLED": "true",
        "TEAM_MESSAGES_ENABLED": "true",
        "CHAT_CARDS_ENABLED": "true",
        "REVIEW_DEFAULT_LANGUAGE": "en",
    }
    with service(tmp_path, settings) as (base, session, _process):
        env = {
            **os.environ,
            "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
            "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
            **settings,
        }
        linked = subprocess.run(
            [sys.executable, "-m", "flask", "--app", "app", "link-chat", "admin", "--feishu", "ou_li", "--wecom", "li"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert linked.returncode == 0, linked.stderr
        task = _one_option_task(base)
        message_id = wait_for(lambda: _card_of(chat_apps, task))
        wait_for(lambda: any(key.startswith(task["id"]) for key in chat_apps.wecom_cards), what="the WeCom card")
        started = time.monotonic()
        status, answer = chat_apps.click_feishu(
            message_id,
            {"taskId": task["id"], "action": "approve_and_publish", "version": task["version"]},
            "ou_li",
            f"{base}/feishu/card",
            FEISHU_TOKEN,
            encrypt_key=FEISHU_KEY,
        )
        assert status == 200 and answer["toast"]["type"] == "success", answer
        assert time.monotonic() - started < 3  # within Feishu's wait
        wait_for(
            lambda: session.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()["status"] == "published",
            30,
            "the publish",
        )
        wait_for(lambda: "Draft ready" in str(chat_apps.feishu_card(message_id)), 30, "the redraw")
        # Strangers, a stale card, a replayed (timestamp, nonce) and a forged signature change nothing.
        waiting = _one_option_task(base)
        card = wait_for(lambda: _card_of(chat_apps, waiting))
        value = {"taskId": waiting["id"], "action": "approve_without_publish", "version": waiting["version"]}
        url = f"{base}/feishu/card"
        assert (
            chat_apps.click_feishu(card, value, "ou_stranger", url, FEISHU_TOKEN, encrypt_key=FEISHU_KEY)[1]["toast"][
                "type"
            ]
            == "error"
        )
        assert (
            chat_apps.click_feishu(card, {**value, "version": 0}, "ou_li", url, FEISHU_TOKEN, encrypt_key=FEISHU_KEY)[
                1
            ]["toast"]["type"]
            == "error"
        )
        assert (
            chat_apps.click_feishu(card, value, "ou_li", url, FEISHU_TOKEN, encrypt_key=FEISHU_KEY, tamper="signature")[
                0
            ]
            == 403
        )
        stamp, nonce = str(int(time.time())), "process-nonce"
        body, headers = feishu_request(
            chat_apps.feishu_callback_body(card, {**value, "version": 0}, "ou_li", FEISHU_TOKEN),
            FEISHU_KEY,
            stamp,
            nonce,
        )
        assert post_feishu(url, body, headers)[0] == 200
        assert post_feishu(url, body, headers)[0] == 403  # the same (timestamp, nonce) again
        assert session.get(f"{base}/api/review/tasks/{waiting['id']}", timeout=10).json()["status"] == "pending_review"
        # One tap in WeCom approves it.
        wecom_id = wait_for(lambda: next((k for k in chat_apps.wecom_cards if k.startswith(waiting["id"])), None))
        status, _text = chat_apps.click_wecom(
            wecom_id,
            f"approve_without_publish:{waiting['id']}:{waiting['version']}",
            "li",
            f"{base}/wecom/events",
            WECOM_TOKEN,
            WECOM_KEY,
        )
        assert status == 200
        assert session.get(f"{base}/api/review/tasks/{waiting['id']}", timeout=10).json()["status"] == "approved"
        # A second task, decided on the page: its cards say so.
        other = _one_option_task(base)
        other_card = wait_for(lambda: _card_of(chat_apps, other))
        decided = session.post(
            f"{base}/api/review/tasks/{other['id']}/decision",
            timeout=30,
            json={"action": "reject_rework", "rejectionReason": "other", "rejectionNote": "换个角度"},
        )
        assert decided.status_code == 200, decided.text
        wait_for(lambda: chat_apps.feishu_cards[other_card]["updates"], 30, "the page's decision on the card")
        assert "Rejected for rework" in str(chat_apps.feishu_card(other_card))
