"""Deciding from the team's chat (docs/api.md §22): a card per waiting task on Feishu and WeCom, one tap that
decides with the page's rules, cards kept true wherever the task is decided, and nothing from strangers,
stale cards, forgeries, stale timestamps or replays."""

import time

import pytest

from fakeplatform.chatapps import feishu_request, post_feishu
from models import ChatCard, db
from tests.helpers.app import create_admin
from tests.helpers.chat import (
    CHAT_ID,
    FEISHU_KEY,
    FEISHU_TOKEN,
    WECOM_KEY,
    WECOM_TOKEN,
    link,
    one_option_task,
    wait_for,
)
from tests.helpers.review import approve_article, create_task, decision_url, make_asset

pytestmark = pytest.mark.both_stores


def _feishu_message(chat_apps, task):
    """The message id of the Feishu card of `task` (its buttons' values or its link name it)."""
    for message_id in chat_apps.feishu_messages:
        if task["id"] in str(chat_apps.feishu_cards[message_id]["card"]):
            return message_id
    return None


def _wecom_card(chat_apps, task, version=None):
    found = [key for key in chat_apps.wecom_cards if key.startswith(task["id"] + "-")]
    if version is not None:
        found = [key for key in found if key == f"{task['id']}-{version}"]
    return found[-1] if found else None


def _buttons(card):
    """The decision buttons' actions of a Feishu card (inside its form)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for behavior in node.get("behaviors") or []:
                if behavior.get("type") == "callback":
                    found.append(behavior["value"]["action"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(card)
    return found


def _click_feishu(chat_apps, served_url, message_id, task, action, open_id="ou_li", version=None, **extra):
    value = {"taskId": task["id"], "action": action, "version": task["version"] if version is None else version}
    return chat_apps.click_feishu(
        message_id, value, open_id, f"{served_url}/feishu/card", FEISHU_TOKEN, encrypt_key=FEISHU_KEY, **extra
    )


def _task(admin_client, task):
    return admin_client.get(f"/api/review/tasks/{task['id']}").get_json()


@pytest.fixture
def linked(app, admin_client):
    link(app, "admin", feishu="ou_li", wecom="li")
    return admin_client


def test_a_waiting_task_gets_a_card_on_both_and_one_tap_approves_it(
    app, client, linked, agent_headers, chat_apps, served_url
):
    task = one_option_task(app, client, agent_headers)
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    card = chat_apps.feishu_cards[message_id]
    assert card["chat_id"] == CHAT_ID and _buttons(card["card"]) == [
        "approve_and_publish",
        "approve_without_publish",
        "reject_rework",
    ]
    text = str(card["card"])
    assert "芯片的一个问题" in text and "一句话摘要" in text and f"https://review.example/review/{task['id']}" in text
    wecom_id = wait_for(lambda: _wecom_card(chat_apps, task, version=task["version"]))
    wecom = chat_apps.wecom_cards[wecom_id]
    assert wecom["touser"] == "li|wang"
    assert [b.get("key") for b in wecom["card"]["button_list"]][:3] == [
        f"{action}:{task['id']}:{task['version']}"
        for action in ("approve_and_publish", "approve_without_publish", "reject_rework")
    ]
    status, answer = _click_feishu(chat_apps, served_url, message_id, task, "approve_without_publish")
    assert status == 200 and answer["toast"]["type"] == "success", answer
    assert _buttons(answer["card"]["data"]) == [] and "admin" in str(answer["card"]["data"])
    decided = _task(linked, task)
    assert decided["status"] == "approved"
    event = next(e for e in decided["timeline"] if e["type"] == "decided_in_chat")
    assert event["actorName"] == "admin"
    assert event["data"] == {"platform": "feishu", "action": "approve_without_publish"}
    # On the Chinese page the chat app and the decision are words, not their codes ("platform：feishu" before).
    page = linked.get(f"/review/{task['id']}", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    entry = page[page.index('data-event="decided_in_chat"') :]
    entry = entry[: entry.index("</li>")]
    assert "群聊应用：飞书" in entry and "审核决定：仅通过" in entry and "feishu" not in entry, entry
    # The WeCom card of the same task says so too (its buttons give way to one grey line).
    wait_for(lambda: chat_apps.wecom_card(wecom_id).get("replace_text"), what="the WeCom update")
    assert "Approved" in chat_apps.wecom_card(wecom_id)["replace_text"]


def test_approve_and_publish_from_wecom_answers_at_once_and_the_card_follows_the_draft(
    app, client, linked, agent_headers, chat_apps, served_url, fake
):
    fake.set_latency(3.0, 0)  # a slow platform: the publish (two calls at least) takes longer than WeCom waits
    task = one_option_task(app, client, agent_headers)
    wecom_id = wait_for(lambda: _wecom_card(chat_apps, task))
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    started = time.monotonic()
    status, text = chat_apps.click_wecom(
        wecom_id,
        f"approve_and_publish:{task['id']}:{task['version']}",
        "li",
        f"{served_url}/wecom/events",
        WECOM_TOKEN,
        WECOM_KEY,
    )
    # Answered within WeCom's 5 s (the fake gives up then), which the publish alone would pass.
    assert status == 200 and time.monotonic() - started < 5, text
    assert _task(linked, task)["status"] in ("approved", "published")
    published = wait_for(
        lambda: _task(linked, task)["status"] == "published" and _task(linked, task), 40, what="the publish"
    )
    assert published["publishJobs"][-1]["triggerMode"] == "auto_after_approval"
    assert published["publishJobs"][-1]["draftMediaId"] in fake.drafts
    # The Feishu card is redrawn once the draft exists: no buttons, the draft ready.
    wait_for(
        lambda: (
            chat_apps.feishu_cards[message_id]["updates"] and "Draft ready" in str(chat_apps.feishu_card(message_id))
        ),
        what="the Feishu redraw",
    )
    assert _buttons(chat_apps.feishu_card(message_id)) == []
    wait_for(lambda: chat_apps.wecom_card(wecom_id).get("replace_text"), what="the WeCom update")


def test_send_back_from_a_card_keeps_the_note(app, client, linked, agent_headers, chat_apps, served_url):
    task = one_option_task(app, client, agent_headers)
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    status, answer = _click_feishu(
        chat_apps, served_url, message_id, task, "reject_rework", form_value={"note": "标题再短一些"}
    )
    assert status == 200 and answer["toast"]["type"] == "success", answer
    rejected = _task(linked, task)
    assert (rejected["status"], rejected["rejectionReason"], rejected["rejectionNote"]) == (
        "rejected_rework",
        "other",
        "标题再短一些",
    )


def test_strangers_stale_cards_forgeries_and_replays_change_nothing(
    app, client, linked, agent_headers, chat_apps, served_url
):
    task = one_option_task(app, client, agent_headers)
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    wecom_id = wait_for(lambda: _wecom_card(chat_apps, task))
    before = _task(linked, task)
    # A stranger, an editor without the review permission, a deactivated one.
    status, answer = _click_feishu(
        chat_apps, served_url, message_id, task, "approve_without_publish", open_id="ou_stranger"
    )
    assert status == 200 and answer["toast"]["type"] == "error" and "not linked" in answer["toast"]["content"]
    create_admin("feedback-only", permissions="feedback")
    link(app, "feedback-only", feishu="ou_fb")
    status, answer = _click_feishu(chat_apps, served_url, message_id, task, "approve_without_publish", open_id="ou_fb")
    assert answer["toast"]["type"] == "error"
    # A card older than the task.
    status, answer = _click_feishu(
        chat_apps, served_url, message_id, task, "approve_without_publish", version=task["version"] - 1
    )
    assert answer["toast"]["type"] == "error" and "changed" in answer["toast"]["content"]
    # Forgeries: a wrong signature, a wrong verification token, no signature.
    for tamper in ("signature", "token", "unsigned"):
        status, _answer = _click_feishu(
            chat_apps, served_url, message_id, task, "approve_without_publish", tamper=tamper
        )
        assert status == 403, tamper
    # A stale timestamp, and a replayed (timestamp, nonce).
    old = str(int(time.time()) - 400)
    status, _answer = _click_feishu(chat_apps, served_url, message_id, task, "approve_without_publish", timestamp=old)
    assert status == 403
    stamp = str(int(time.time()))
    body, headers = feishu_request(
        chat_apps.feishu_callback_body(
            message_id, {"taskId": task["id"], "action": "approve_without_publish", "version": 0}, "ou_li", FEISHU_TOKEN
        ),
        FEISHU_KEY,
        stamp,
        "nonce-1",
    )
    assert post_feishu(f"{served_url}/feishu/card", body, headers)[0] == 200  # stale version: answered, refused
    replay, _ = post_feishu(f"{served_url}/feishu/card", body, headers)
    assert replay == 403
    # WeCom: a stranger; a forged signature; a stale timestamp.
    status, _text = chat_apps.click_wecom(
        wecom_id,
        f"approve_without_publish:{task['id']}:{task['version']}",
        "stranger",
        f"{served_url}/wecom/events",
        WECOM_TOKEN,
        WECOM_KEY,
    )
    assert status == 200
    status, _text = chat_apps.click_wecom(
        wecom_id,
        f"approve_without_publish:{task['id']}:{task['version']}",
        "li",
        f"{served_url}/wecom/events",
        "not-the-token",
        WECOM_KEY,
    )
    assert status == 403
    status, _text = chat_apps.click_wecom(
        wecom_id,
        f"approve_without_publish:{task['id']}:{task['version']}",
        "li",
        f"{served_url}/wecom/events",
        WECOM_TOKEN,
        WECOM_KEY,
        timestamp=old,
    )
    assert status == 403
    after = _task(linked, task)
    assert (after["status"], after["version"]) == (before["status"], before["version"])
    assert "decided_in_chat" not in [e["type"] for e in after["timeline"]]


def test_a_task_with_choices_left_gets_only_the_link(app, client, linked, agent_headers, chat_apps, served_url):
    cover = make_asset(app, 900, 500)
    from tests.helpers.review import article_payload

    task = create_task(client, agent_headers, article_payload([cover["url"]]))  # two titles, two bodies
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    assert _buttons(chat_apps.feishu_cards[message_id]["card"]) == []
    assert f"/review/{task['id']}" in str(chat_apps.feishu_cards[message_id]["card"])
    wecom_id = wait_for(lambda: _wecom_card(chat_apps, task))
    assert [b.get("type") for b in chat_apps.wecom_cards[wecom_id]["card"]["button_list"]] == [1]
    # A click forged for such a task (a button it never had) decides nothing.
    status, answer = _click_feishu(chat_apps, served_url, message_id, task, "approve_without_publish")
    assert answer["toast"]["type"] == "error" and _task(linked, task)["status"] == "pending_review"


def test_a_task_decided_on_the_page_updates_its_cards(app, client, linked, agent_headers, chat_apps, served_url):
    task = one_option_task(app, client, agent_headers)
    message_id = wait_for(lambda: _feishu_message(chat_apps, task))
    wecom_id = wait_for(lambda: _wecom_card(chat_apps, task))
    cover = next(a for a in [make_asset(app, 900, 500)])
    answer = linked.post(decision_url(task), json=approve_article(task, cover))
    assert answer.status_code == 200, answer.get_json()
    wait_for(lambda: chat_apps.feishu_cards[message_id]["updates"], what="the Feishu redraw")
    assert _buttons(chat_apps.feishu_card(message_id)) == [] and "admin" in str(chat_apps.feishu_card(message_id))
    wait_for(lambda: chat_apps.wecom_card(wecom_id).get("replace_text"), what="the WeCom update")

    def states():
        with db.connection_context():
            return {c.platform: c.state for c in ChatCard.select()}

    wait_for(lambda: states() == {"feishu": "sent", "wecom": "closed"}, what="the WeCom card closed")


def test_the_platforms_url_checks(app, served_url, chat_apps):
    status, answer, challenge = chat_apps.verify_feishu_url(f"{served_url}/feishu/card", FEISHU_TOKEN, FEISHU_KEY)
    assert (status, answer) == (200, {"challenge": challenge})
    status, answer, _challenge = chat_apps.verify_feishu_url(f"{served_url}/feishu/card", "wrong", FEISHU_KEY)
    assert status == 403
    status, text, echo = chat_apps.verify_wecom_url(f"{served_url}/wecom/events", WECOM_TOKEN, WECOM_KEY)
    assert (status, text) == (200, echo)
    status, _text, _echo = chat_apps.verify_wecom_url(f"{served_url}/wecom/events", "wrong", WECOM_KEY)
    assert status == 403


def test_link_chat_links_and_unlinks(app, admin_client):
    runner = app.test_cli_runner()
    assert "feishu ou_a, wecom wa" in link(app, "admin", feishu="ou_a", wecom="wa")
    create_admin("other")
    taken = runner.invoke(args=["link-chat", "other", "--feishu", "ou_a"])
    assert taken.exit_code != 0 and "linked to admin" in taken.output
    assert runner.invoke(args=["link-chat", "nobody", "--feishu", "x"]).exit_code != 0
    assert runner.invoke(args=["link-chat", "admin"]).exit_code != 0  # nothing to link
    unlinked = runner.invoke(args=["link-chat", "admin", "--unlink"])
    assert unlinked.exit_code == 0 and "feishu -, wecom -" in unlinked.output


def test_a_refused_token_is_fetched_again_once(app, client, linked, agent_headers, chat_apps, served_url):
    first = one_option_task(app, client, agent_headers, title="第一个")
    wait_for(lambda: _feishu_message(chat_apps, first) and _wecom_card(chat_apps, first))
    chat_apps.expire_tokens()
    second = one_option_task(app, client, agent_headers, title="第二个")
    wait_for(lambda: _feishu_message(chat_apps, second) and _wecom_card(chat_apps, second))
    assert len(chat_apps.requests_to("tenant_access_token/internal")) == 2
    assert len(chat_apps.requests_to("gettoken")) == 2
