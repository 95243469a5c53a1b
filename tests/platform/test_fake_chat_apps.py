"""The fake Feishu and WeCom chat apps (fakeplatform.chatapps) over real HTTP: tokens, cards sent and
updated, the platforms' refusals, and clicks and URL checks whose bodies open and verify by the documented
formulas (Feishu's decrypted here with `cryptography`; WeCom's with the service's own WXBizMsgCrypt code)."""

import base64
import hashlib
import json
import time
import xml.etree.ElementTree as ET

import pytest
import requests
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from werkzeug.wrappers import Request, Response

from fakeplatform import FakeChatApps, describe_card
from fakeplatform.freepublish import encoding_aes_key
from fakeplatform.threaded import Served
from services.platform.pushes import decrypt, signature

APP_ID, APP_SECRET = "cli_test_app", "feishu-secret"
CORP_ID, CORP_SECRET, AGENT_ID = "wwtestcorp", "wecom-secret", 1000005
VERIFICATION_TOKEN, ENCRYPT_KEY = "verification-token", "encrypt-key-123"
WECOM_TOKEN = "wecom-callback-token"
CHAT = "oc_team"
CARD = {
    "schema": "2.0",
    "config": {"update_multi": True},
    "header": {"title": {"tag": "plain_text", "content": "Silicon Rise: New chips"}},
    "body": {
        "elements": [
            {"tag": "markdown", "content": "A summary of the article"},
            {
                "tag": "button",
                "text": {"tag": "plain_text", "content": "通过并发布"},
                "type": "primary",
                "behaviors": [
                    {"type": "callback", "value": {"taskId": "t1", "action": "approve_publish", "version": 3}}
                ],
            },
            {
                "tag": "button",
                "text": {"tag": "plain_text", "content": "打开审核"},
                "behaviors": [{"type": "open_url", "default_url": "http://service/tasks/t1"}],
            },
        ]
    },
}
TEMPLATE_CARD = {
    "card_type": "button_interaction",
    "task_id": "t1-3",
    "main_title": {"title": "Silicon Rise: New chips", "desc": "by alice, 2026-11-28"},
    "sub_title_text": "A summary of the article",
    "card_action": {"type": 1, "url": "http://service/tasks/t1"},
    "button_list": [
        {"text": "通过并发布", "style": 1, "key": "approve_publish:t1:3"},
        {"text": "退回修改", "style": 2, "key": "send_back:t1:3"},
    ],
}


class Receiver:
    """The service's side, on 127.0.0.1: keeps each request (method, query, headers, body) and answers with
    `reply(request)` (default: an empty 200)."""

    def __init__(self):
        self.received = []
        self.reply = lambda request: Response("", status=200)
        self._served = Served(self._app)
        self.url = f"{self._served.url}/hook"

    @Request.application
    def _app(self, request):
        self.received.append(
            {
                "method": request.method,
                "query": request.args.to_dict(),
                "headers": dict(request.headers),
                "body": request.get_data(),
            }
        )
        return self.reply(request)

    def stop(self):
        self._served.stop()


@pytest.fixture
def fake():
    chat = FakeChatApps(APP_ID, APP_SECRET, CORP_ID, CORP_SECRET, AGENT_ID)
    chat.start()
    yield chat
    chat.stop()


@pytest.fixture
def receiver():
    hook = Receiver()
    yield hook
    hook.stop()


# ---- helpers: the documented formulas, written here on their own ------------------------------------------------
def lark_decrypt(encrypt_key, encrypted):
    data = base64.b64decode(encrypted)
    key = hashlib.sha256(encrypt_key.encode()).digest()
    decryptor = Cipher(algorithms.AES(key), modes.CBC(data[:16])).decryptor()
    padded = decryptor.update(data[16:]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return json.loads(unpadder.update(padded) + unpadder.finalize())


def lark_signature(headers, encrypt_key, body):
    text = (headers["X-Lark-Request-Timestamp"] + headers["X-Lark-Request-Nonce"] + encrypt_key).encode() + body
    return hashlib.sha256(text).hexdigest()


def feishu_token(fake):
    answer = requests.post(
        f"{fake.base_url}/open-apis/auth/v3/tenant_access_token/internal",
        json={"app_id": APP_ID, "app_secret": APP_SECRET},
        timeout=5,
    ).json()
    return answer["tenant_access_token"]


def send_card(fake, token, card=CARD, chat=CHAT):
    return requests.post(
        f"{fake.base_url}/open-apis/im/v1/messages",
        params={"receive_id_type": "chat_id"},
        headers={"Authorization": f"Bearer {token}"},
        json={"receive_id": chat, "msg_type": "interactive", "content": json.dumps(card)},
        timeout=5,
    )


def wecom_token(fake):
    answer = requests.get(
        f"{fake.base_url}/cgi-bin/gettoken", params={"corpid": CORP_ID, "corpsecret": CORP_SECRET}, timeout=5
    ).json()
    return answer["access_token"]


def send_template_card(fake, token, card=TEMPLATE_CARD, touser="alice|bob"):
    return requests.post(
        f"{fake.base_url}/cgi-bin/message/send",
        params={"access_token": token},
        json={"touser": touser, "msgtype": "template_card", "agentid": AGENT_ID, "template_card": card},
        timeout=5,
    ).json()


def update_template_card(fake, token, response_code, **part):
    part = part or {"button": {"replace_name": "已通过并发布"}}
    return requests.post(
        f"{fake.base_url}/cgi-bin/message/update_template_card",
        params={"access_token": token},
        json={"userids": ["alice"], "agentid": AGENT_ID, "response_code": response_code, **part},
        timeout=5,
    ).json()


# ---- Feishu -----------------------------------------------------------------------------------------------------
def test_feishu_token_and_its_refusals(fake):
    url = f"{fake.base_url}/open-apis/auth/v3/tenant_access_token/internal"
    first = requests.post(url, json={"app_id": APP_ID, "app_secret": APP_SECRET}, timeout=5)
    answer = first.json()
    assert first.status_code == 200 and answer["code"] == 0 and answer["msg"] == "ok"
    assert answer["tenant_access_token"].startswith("t-") and answer["expire"] == 7200
    # More than 30 minutes left: the same token comes back.
    again = requests.post(url, json={"app_id": APP_ID, "app_secret": APP_SECRET}, timeout=5).json()
    assert again["tenant_access_token"] == answer["tenant_access_token"]

    unknown = requests.post(url, json={"app_id": "cli_other", "app_secret": APP_SECRET}, timeout=5)
    assert unknown.status_code == 200 and unknown.json()["code"] == 10003
    wrong = requests.post(url, json={"app_id": APP_ID, "app_secret": "nope"}, timeout=5)
    assert wrong.status_code == 400 and wrong.json()["code"] == 10014 and wrong.json()["msg"] == "app secret invalid"


def test_feishu_send_and_update_a_card(fake):
    token = feishu_token(fake)
    sent = send_card(fake, token)
    assert sent.status_code == 200
    answer = sent.json()
    assert answer["code"] == 0 and answer["msg"] == "success"
    message_id = answer["data"]["message_id"]
    assert message_id.startswith("om_") and answer["data"]["chat_id"] == CHAT
    second = send_card(fake, token).json()["data"]["message_id"]
    assert fake.feishu_messages == [message_id, second]
    assert fake.feishu_cards[message_id]["chat_id"] == CHAT
    assert fake.feishu_cards[message_id]["card"] == CARD and fake.feishu_cards[message_id]["updates"] == []

    done = {
        "schema": "2.0",
        "header": {"title": {"tag": "plain_text", "content": "Approved by alice"}},
        "body": {"elements": [{"tag": "markdown", "content": "Published"}]},
    }
    patched = requests.patch(
        f"{fake.base_url}/open-apis/im/v1/messages/{message_id}",
        headers={"Authorization": f"Bearer {token}"},
        json={"content": json.dumps(done)},
        timeout=5,
    )
    assert patched.status_code == 200 and patched.json()["code"] == 0
    assert fake.feishu_cards[message_id]["updates"] == [done] and fake.feishu_card(message_id) == done

    unknown = requests.patch(
        f"{fake.base_url}/open-apis/im/v1/messages/om_unknown",
        headers={"Authorization": f"Bearer {token}"},
        json={"content": json.dumps(done)},
        timeout=5,
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == 230001


def test_feishu_refusals(fake):
    url = f"{fake.base_url}/open-apis/im/v1/messages"
    body = {"receive_id": CHAT, "msg_type": "interactive", "content": json.dumps(CARD)}
    missing = requests.post(url, params={"receive_id_type": "chat_id"}, json=body, timeout=5)
    assert missing.status_code == 400 and missing.json()["code"] == 99991661
    no_bearer = requests.post(
        url, params={"receive_id_type": "chat_id"}, json=body, timeout=5, headers={"Authorization": "t-whatever"}
    )
    assert no_bearer.json()["code"] == 99991661
    forged = send_card(fake, "t-forged")
    assert forged.status_code == 400 and forged.json()["code"] == 99991663

    token = feishu_token(fake)
    bad_card = requests.post(
        url,
        params={"receive_id_type": "chat_id"},
        headers={"Authorization": f"Bearer {token}"},
        json={**body, "content": "{not json"},
        timeout=5,
    )
    assert bad_card.status_code == 400 and bad_card.json()["code"] == 230099
    no_type = requests.post(url, headers={"Authorization": f"Bearer {token}"}, json=body, timeout=5)
    assert no_type.json()["code"] == 99992402
    fake.feishu_chats = {"oc_other"}
    assert send_card(fake, token).json()["code"] == 230002
    fake.feishu_chats = None

    fake.expire_tokens()
    assert send_card(fake, token).json()["code"] == 99991663
    fresh = feishu_token(fake)
    assert fresh != token and send_card(fake, fresh).json()["code"] == 0
    assert fake.feishu_messages and all(m in fake.feishu_cards for m in fake.feishu_messages)


def test_feishu_plaintext_click(fake, receiver):
    message_id = send_card(fake, feishu_token(fake)).json()["data"]["message_id"]
    updated = {
        "schema": "2.0",
        "header": {"title": {"tag": "plain_text", "content": "Approved"}},
        "body": {"elements": []},
    }
    receiver.reply = lambda request: Response(
        json.dumps({"toast": {"type": "success", "content": "Approved"}, "card": {"type": "raw", "data": updated}}),
        content_type="application/json",
    )
    value = {"taskId": "t1", "action": "approve_publish", "version": 3}
    status, answer = fake.click_feishu(message_id, value, "ou_alice", receiver.url, VERIFICATION_TOKEN)
    assert status == 200 and answer["toast"]["type"] == "success"
    got = receiver.received[-1]
    assert got["method"] == "POST"
    assert got["headers"]["X-Lark-Request-Timestamp"].isdigit() and got["headers"]["X-Lark-Request-Nonce"]
    assert abs(int(got["headers"]["X-Lark-Request-Timestamp"]) - time.time()) < 10
    assert "X-Lark-Signature" not in got["headers"]  # signed only with an Encrypt Key
    event = json.loads(got["body"])
    assert event["schema"] == "2.0"
    assert event["header"]["event_type"] == "card.action.trigger" and event["header"]["token"] == VERIFICATION_TOKEN
    assert event["header"]["app_id"] == APP_ID and event["header"]["event_id"]
    assert event["event"]["operator"]["open_id"] == "ou_alice"
    assert event["event"]["action"] == {"value": value, "tag": "button"}
    assert event["event"]["context"] == {"open_message_id": message_id, "open_chat_id": CHAT}
    assert event["event"]["host"] == "im_message" and event["event"]["token"].startswith("c-")
    # The answer's raw card replaced the card in the chat.
    assert fake.feishu_cards[message_id]["updates"] == [updated]
    assert fake.callbacks[-1]["kind"] == "card.action.trigger" and fake.callbacks[-1]["status"] == 200


def test_feishu_encrypted_click_opens_and_verifies(fake, receiver):
    message_id = send_card(fake, feishu_token(fake)).json()["data"]["message_id"]
    value = {"taskId": "t1", "action": "send_back", "version": 3}
    status, _ = fake.click_feishu(
        message_id,
        value,
        "ou_bob",
        receiver.url,
        VERIFICATION_TOKEN,
        ENCRYPT_KEY,
        form_value={"note": "fix the title"},
        timestamp="1764300000",
        nonce="n-1",
    )
    assert status == 200
    got = receiver.received[-1]
    envelope = json.loads(got["body"])
    assert list(envelope) == ["encrypt"]
    assert got["headers"]["X-Lark-Request-Timestamp"] == "1764300000"
    assert got["headers"]["X-Lark-Request-Nonce"] == "n-1"
    assert got["headers"]["X-Lark-Signature"] == lark_signature(got["headers"], ENCRYPT_KEY, got["body"])
    event = lark_decrypt(ENCRYPT_KEY, envelope["encrypt"])
    assert event["header"]["token"] == VERIFICATION_TOKEN
    assert event["event"]["action"]["value"] == value and event["event"]["action"]["form_value"] == {
        "note": "fix the title"
    }
    assert event["event"]["context"]["open_message_id"] == message_id
    # Two clicks: new IVs and nonces.
    fake.click_feishu(message_id, value, "ou_bob", receiver.url, VERIFICATION_TOKEN, ENCRYPT_KEY)
    assert receiver.received[-1]["body"] != got["body"]
    assert receiver.received[-1]["headers"]["X-Lark-Request-Nonce"] != "n-1"


def test_feishu_forgeries(fake, receiver):
    message_id = send_card(fake, feishu_token(fake)).json()["data"]["message_id"]
    fake.click_feishu(message_id, {"a": 1}, "ou_eve", receiver.url, VERIFICATION_TOKEN, ENCRYPT_KEY, tamper="signature")
    got = receiver.received[-1]
    assert got["headers"]["X-Lark-Signature"] != lark_signature(got["headers"], ENCRYPT_KEY, got["body"])
    fake.click_feishu(message_id, {"a": 1}, "ou_eve", receiver.url, VERIFICATION_TOKEN, ENCRYPT_KEY, tamper="token")
    got = receiver.received[-1]
    assert got["headers"]["X-Lark-Signature"] == lark_signature(got["headers"], ENCRYPT_KEY, got["body"])
    assert lark_decrypt(ENCRYPT_KEY, json.loads(got["body"])["encrypt"])["header"]["token"] != VERIFICATION_TOKEN
    fake.click_feishu(message_id, {"a": 1}, "ou_eve", receiver.url, VERIFICATION_TOKEN, ENCRYPT_KEY, tamper="unsigned")
    assert "X-Lark-Signature" not in receiver.received[-1]["headers"]


def test_feishu_url_verification(fake, receiver):
    def echo(request):
        body = json.loads(request.get_data())
        if "encrypt" in body:
            body = lark_decrypt(ENCRYPT_KEY, body["encrypt"])
        if body.get("type") != "url_verification" or body.get("token") != VERIFICATION_TOKEN:
            return Response("{}", status=403)
        return Response(json.dumps({"challenge": body["challenge"]}), content_type="application/json")

    receiver.reply = echo
    status, answer, challenge = fake.verify_feishu_url(receiver.url, VERIFICATION_TOKEN)
    assert status == 200 and answer == {"challenge": challenge}
    assert json.loads(receiver.received[-1]["body"]) == {
        "challenge": challenge,
        "token": VERIFICATION_TOKEN,
        "type": "url_verification",
    }
    status, answer, challenge = fake.verify_feishu_url(receiver.url, VERIFICATION_TOKEN, ENCRYPT_KEY)
    assert status == 200 and answer == {"challenge": challenge}
    got = receiver.received[-1]
    assert list(json.loads(got["body"])) == ["encrypt"]
    assert got["headers"]["X-Lark-Signature"] == lark_signature(got["headers"], ENCRYPT_KEY, got["body"])
    assert fake.verify_feishu_url(receiver.url, "wrong-token")[0] == 403


def test_a_slow_answer_is_a_timeout(fake, receiver):
    def slow(_request):
        time.sleep(0.6)  # an answer slower than the 0.3 s the caller waits: the timeout under test
        return Response("{}")

    receiver.reply = slow
    assert fake.click_feishu("om_x", {}, "ou_a", receiver.url, VERIFICATION_TOKEN, timeout=0.3) == (None, "timeout")
    assert fake.click_wecom("t1-3", "k", "alice", receiver.url, WECOM_TOKEN, encoding_aes_key(), timeout=0.3) == (
        None,
        "timeout",
    )


# ---- WeCom ------------------------------------------------------------------------------------------------------
def test_wecom_token_and_its_refusals(fake):
    url = f"{fake.base_url}/cgi-bin/gettoken"
    answer = requests.get(url, params={"corpid": CORP_ID, "corpsecret": CORP_SECRET}, timeout=5).json()
    assert answer["errcode"] == 0 and answer["errmsg"] == "ok" and answer["expires_in"] == 7200
    assert (
        requests.get(url, params={"corpid": CORP_ID, "corpsecret": CORP_SECRET}, timeout=5).json()["access_token"]
        == answer["access_token"]
    )
    codes = [
        requests.get(url, params=params, timeout=5).json()["errcode"]
        for params in (
            {"corpid": "wwother", "corpsecret": CORP_SECRET},
            {"corpid": CORP_ID, "corpsecret": "nope"},
            {"corpsecret": CORP_SECRET},
            {"corpid": CORP_ID},
        )
    ]
    assert codes == [40013, 40001, 41002, 41004]


def test_wecom_send_and_update_a_card(fake):
    token = wecom_token(fake)
    answer = send_template_card(fake, token)
    assert answer["errcode"] == 0 and answer["errmsg"] == "ok" and answer["invaliduser"] == ""
    assert answer["msgid"] and answer["response_code"]
    record = fake.wecom_cards["t1-3"]
    assert record["touser"] == "alice|bob" and record["card"] == TEMPLATE_CARD
    assert record["msgid"] == answer["msgid"] and record["response_code"] == answer["response_code"]
    assert send_template_card(fake, token)["errcode"] == 42014  # the task_id was taken

    assert update_template_card(fake, token, answer["response_code"])["errcode"] == 0
    assert record["updates"][-1]["button"] == {"replace_name": "已通过并发布"}
    assert fake.wecom_card("t1-3")["replace_text"] == "已通过并发布"
    assert update_template_card(fake, token, answer["response_code"])["errcode"] == 40058  # usable once
    assert update_template_card(fake, token, "unknown-code")["errcode"] == 40058


def test_wecom_refusals(fake):
    token = wecom_token(fake)
    assert send_template_card(fake, "forged")["errcode"] == 40014
    assert requests.post(f"{fake.base_url}/cgi-bin/message/send", json={}, timeout=5).json()["errcode"] == 41001
    wrong_agent = requests.post(
        f"{fake.base_url}/cgi-bin/message/send",
        params={"access_token": token},
        timeout=5,
        json={"touser": "alice", "msgtype": "template_card", "agentid": 1, "template_card": TEMPLATE_CARD},
    ).json()
    assert wrong_agent["errcode"] == 40056 and "more info at" in wrong_agent["errmsg"]
    assert send_template_card(fake, token, {**TEMPLATE_CARD, "task_id": "bad id!"})["errcode"] == 42014
    fake.wecom_users = {"alice"}
    partly = send_template_card(fake, token, {**TEMPLATE_CARD, "task_id": "t2-1"}, touser="alice|mallory")
    assert partly["errcode"] == 0 and partly["invaliduser"] == "mallory"
    assert send_template_card(fake, token, {**TEMPLATE_CARD, "task_id": "t3-1"}, touser="mallory")["errcode"] == 81013
    fake.expire_response_codes()
    assert update_template_card(fake, token, partly["response_code"])["errcode"] == 40058
    fake.expire_tokens()
    assert send_template_card(fake, token, {**TEMPLATE_CARD, "task_id": "t4-1"})["errcode"] == 42001
    fake.fail_next("/cgi-bin/message/send", {"errcode": -1, "errmsg": "system busy"})
    assert send_template_card(fake, wecom_token(fake), {**TEMPLATE_CARD, "task_id": "t5-1"})["errcode"] == -1


def test_wecom_click_opens_with_the_services_crypto(fake, receiver):
    token, aes_key = wecom_token(fake), encoding_aes_key()
    sent = send_template_card(fake, token)
    receiver.reply = lambda request: Response("success", content_type="text/plain")
    status, text = fake.click_wecom(
        "t1-3",
        "approve_publish:t1:3",
        "alice",
        receiver.url,
        WECOM_TOKEN,
        aes_key,
        CORP_ID,
        timestamp="1764300000",
        nonce="4242",
    )
    assert (status, text) == (200, "success")
    got = receiver.received[-1]
    assert got["headers"]["Content-Type"] == "text/xml"
    envelope = ET.fromstring(got["body"])
    assert envelope.findtext("ToUserName") == CORP_ID and envelope.findtext("AgentID") == str(AGENT_ID)
    encrypted = envelope.findtext("Encrypt")
    assert got["query"]["timestamp"] == "1764300000" and got["query"]["nonce"] == "4242"
    assert got["query"]["msg_signature"] == signature(WECOM_TOKEN, "1764300000", "4242", encrypted)
    event = ET.fromstring(decrypt(aes_key, encrypted, CORP_ID))
    fields = {child.tag: child.text for child in event}
    assert fields["ToUserName"] == CORP_ID and fields["FromUserName"] == "alice"
    assert fields["MsgType"] == "event" and fields["Event"] == "template_card_event"
    assert fields["EventKey"] == "approve_publish:t1:3" and fields["TaskId"] == "t1-3"
    assert fields["CardType"] == "button_interaction" and fields["AgentID"] == str(AGENT_ID)
    assert abs(int(fields["CreateTime"]) - time.time()) < 10
    # Each callback carries its own response_code, good for one update (the send's stays good too).
    code = fields["ResponseCode"]
    assert code != sent["response_code"] and fake.wecom_cards["t1-3"]["response_codes"] == [sent["response_code"], code]
    assert update_template_card(fake, token, code)["errcode"] == 0
    assert update_template_card(fake, token, code)["errcode"] == 40058
    assert (
        update_template_card(
            fake,
            token,
            sent["response_code"],
            template_card={**TEMPLATE_CARD, "button_list": [], "sub_title_text": "Approved by alice"},
        )["errcode"]
        == 0
    )
    assert fake.wecom_card("t1-3")["sub_title_text"] == "Approved by alice"
    with pytest.raises(ValueError):  # another corp's key does not open it
        decrypt(aes_key, encrypted, "wwother")
    assert fake.callbacks[-1]["response_code"] == code


def test_wecom_url_verification(fake, receiver):
    aes_key = encoding_aes_key()

    def answer(request):
        query = request.args
        if query["msg_signature"] != signature(WECOM_TOKEN, query["timestamp"], query["nonce"], query["echostr"]):
            return Response("bad signature", status=403)
        return Response(decrypt(aes_key, query["echostr"], CORP_ID), content_type="text/plain")

    receiver.reply = answer
    status, text, plain = fake.verify_wecom_url(receiver.url, WECOM_TOKEN, aes_key, CORP_ID)
    assert status == 200 and text == plain and plain.isdigit()
    assert receiver.received[-1]["method"] == "GET"
    assert fake.verify_wecom_url(receiver.url, "other-token", aes_key)[0] == 403


# ---- the demo's text ----------------------------------------------------------------------------------------------
def test_describe_card():
    feishu = describe_card(CARD)
    assert feishu.splitlines()[0] == "# Silicon Rise: New chips"
    assert "A summary of the article" in feishu
    assert "[通过并发布] -> callback" in feishu and '"action": "approve_publish"' in feishu
    assert "[打开审核] -> http://service/tasks/t1" in feishu
    wecom = describe_card(TEMPLATE_CARD)
    assert wecom.splitlines()[:3] == ["# Silicon Rise: New chips", "by alice, 2026-11-28", "A summary of the article"]
    assert "[通过并发布] -> key approve_publish:t1:3" in wecom and "(card opens http://service/tasks/t1)" in wecom
    assert "[已通过] (done, no buttons)" in describe_card({**TEMPLATE_CARD, "replace_text": "已通过"})
