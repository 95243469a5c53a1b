"""Tasks for the chat's decision cards (docs/api.md §22): one option per field, or choices left."""

from fakeplatform.freepublish import encoding_aes_key
from tests.helpers.review import article_payload, create_task, make_asset
from tests.helpers.waiting import wait_until

FEISHU_TOKEN, FEISHU_KEY, CHAT_ID = "feishu-verification-token", "feishu-encrypt-key", "oc_team_group"
WECOM_TOKEN, WECOM_KEY = "wecom-callback-token", encoding_aes_key()


def chat_settings(apps, **extra):
    """The settings naming the fake chat apps (fakeplatform/chatapps.py)."""
    return {
        "FEISHU_APP_ID": apps.app_id,
        "FEISHU_APP_SECRET": apps.app_secret,
        "FEISHU_VERIFICATION_TOKEN": FEISHU_TOKEN,
        "FEISHU_ENCRYPT_KEY": FEISHU_KEY,
        "FEISHU_CHAT_ID": CHAT_ID,
        "FEISHU_API_BASE": apps.base_url,
        "WECOM_CORP_ID": apps.corp_id,
        "WECOM_AGENT_ID": str(apps.agent_id),
        "WECOM_SECRET": apps.corp_secret,
        "WECOM_TOKEN": WECOM_TOKEN,
        "WECOM_AES_KEY": WECOM_KEY,
        "WECOM_TO_USERS": "li|wang",
        "WECOM_API_BASE": apps.base_url,
        **extra,
    }


def one_option_task(app, client, agent_headers, title="芯片的一个问题"):
    """An article whose every field has one candidate: nothing is left to choose."""
    cover = make_asset(app, 900, 500)
    payload = article_payload([cover["url"]], topic=title)
    payload["candidates"].update(
        titles=[title],
        summaries=["一句话摘要"],
        authors=["硅基君"],
        bodyOptions=[payload["candidates"]["bodyOptions"][0]],
    )
    return create_task(client, agent_headers, payload)


def link(app, username, feishu=None, wecom=None):
    args = ["link-chat", username, *(["--feishu", feishu] if feishu else []), *(["--wecom", wecom] if wecom else [])]
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output
    return result.output


def wait_for(predicate, seconds=15, what="the card"):
    return wait_until(predicate, seconds, f"{what} did not come")
