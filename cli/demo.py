"""`python app.py --demo`: the service with a fake WeChat platform beside it, a demo admin and
sample data, in a temporary folder, so a newcomer can click through review, publish and triage
offline. Also `flask --app app seed-demo` to add the sample data to an existing instance."""

import atexit
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import click
import requests

from fakeplatform import FakePlatform
from fakeplatform.chatapps import FakeChatApps, describe_card
from fakeplatform.freepublish import encoding_aes_key
from fakeplatform.robots import FakeRobot
from models import db
from rules import accounts
from services.auth import save_admin
from services.chat.linking import link_chat
from services.demo import seed, seed_comments, seed_edition, seed_live, task_count
from services.settings import configured_accounts

DEMO_ADMIN = "demo"
DEMO_FEISHU, DEMO_WECOM = "ou_demo_editor", "demo_editor"  # the demo admin in the chat apps
DEMO_WECOM_KEY = "DemoWeComEncodingAESKey0123456789abcdefghij"
DEMO_LATENCY = (0.15, 0.03)  # a platform call from a server outside its region: 150 ms ± 30 ms
PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)  # where `python -m agentmcp` runs


def register(app):
    @app.cli.command("seed-demo")
    def seed_demo():
        """Add the sample tasks, library images and feedback (skipped when tasks already exist)."""
        with db.connection_context():
            created = seed(app.extensions["settings"])
        if not created["tasks"]:
            raise click.ClickException("this instance already holds review tasks; nothing was added")
        click.echo(
            f"added {len(created['tasks'])} tasks, {len(created['feedback'])} feedback records, "
            f"{len(created['library'])} library images"
        )


def demo_accounts() -> tuple[str, ...]:
    """The accounts the demo shows: WECHAT_ACCOUNTS from the environment, else the default two."""
    return configured_accounts(os.environ)


def platform_settings(base_url, codes=None):
    """Settings that point every account at the fake platform, each with its server URL's token."""
    settings = {"WECHAT_API_BASE": base_url}
    for account in codes or demo_accounts():
        prefix = accounts.setting_prefix(account)
        settings[prefix + "_APPID"] = f"wx-demo-{account}"
        settings[prefix + "_SECRET"] = f"demo-secret-{account}"
        settings[prefix + "_TOKEN"] = f"demo-token-{account}"
    return settings


def start_fake_platform():
    """A fake WeChat platform knowing the demo accounts, serving in a thread; (fake, base URL)."""
    settings = platform_settings("")
    fake = FakePlatform(
        accounts={
            settings[accounts.setting_prefix(code) + "_APPID"]: settings[accounts.setting_prefix(code) + "_SECRET"]
            for code in demo_accounts()
        }
    )
    return fake, fake.start()


def safe_mode_settings(codes=None):
    """One account in safe mode (docs/api.md §18): the last of two or more gets a new EncodingAESKey, so the
    demo tries both modes; the others stay plaintext. Every account's key is the demo's own, empty where
    plaintext: a WECHAT_<CODE>_AES_KEY from the environment is neither printed nor used (docs/api.md §1)."""
    codes = tuple(codes or demo_accounts())
    keys = {accounts.setting_prefix(code) + "_AES_KEY": "" for code in codes}
    if len(codes) >= 2:
        keys[accounts.setting_prefix(codes[-1]) + "_AES_KEY"] = encoding_aes_key()
    return keys


def push_events_to(fake, public_url, aes_keys=None):
    """The fake platform tells the demo when an article went live, at each account's server URL: encrypted
    for an account with an EncodingAESKey in `aes_keys` (safe_mode_settings), plaintext otherwise."""
    settings = platform_settings("")
    for code in demo_accounts():
        prefix = accounts.setting_prefix(code)
        key = (aes_keys or {}).get(prefix + "_AES_KEY", "")
        fake.send_events_to(
            settings[prefix + "_APPID"],
            f"{public_url}/wechat/{code}/events",
            settings[prefix + "_TOKEN"],
            aes_key=key,
            mode="aes" if key else "plain",
        )


def callback_lines(url, config):
    """What a tester points at the demo (the demo's own secrets, never an instance's): each account's server
    URL with its token and, in safe mode, its EncodingAESKey (docs/api.md §18), and the chat apps' callbacks
    (docs/api.md §22)."""
    lines = ["  Server URL  each account's platform pushes its results here (its server configuration):"]
    for code in demo_accounts():
        prefix = accounts.setting_prefix(code)
        key = config.get(prefix + "_AES_KEY")
        mode = f"EncodingAESKey {key}   (safe mode)" if key else "(plaintext mode)"
        lines.append(
            f"              {url}/wechat/{code}/events   AppID {config[prefix + '_APPID']}   "
            f"Token {config[prefix + '_TOKEN']}   {mode}"
        )
    return [
        *lines,
        "  Callbacks   the chat apps' button clicks:",
        f"              Feishu {url}/feishu/card   Verification Token {config['FEISHU_VERIFICATION_TOKEN']}   "
        f"Encrypt Key {config['FEISHU_ENCRYPT_KEY']}",
        f"              WeCom  {url}/wecom/events   Token {config['WECOM_TOKEN']}   "
        f"EncodingAESKey {config['WECOM_AES_KEY']}   CorpID {config['WECOM_CORP_ID']}",
    ]


def mcp_lines(url: str, token: str) -> list[str]:
    """How to point an MCP client (Claude Desktop, an agent framework) at this service."""
    command = {
        "command": sys.executable,
        "args": ["-m", "agentmcp"],
        "cwd": PROJECT_ROOT,
        "env": {"REVIEW_BASE_URL": url, "REVIEW_AGENT_TOKEN": token},
    }
    config = json.dumps({"mcpServers": {"content-review": command}}, ensure_ascii=False)
    http_token = secrets.token_urlsafe(16)  # --http refuses to start without one (docs/api.md §16)
    return [
        "  MCP         add this server to your MCP client's configuration (stdio):",
        f"              {config}",
        f"              or serve streamable HTTP: MCP_HTTP_TOKEN={http_token} REVIEW_BASE_URL={url} "
        f"REVIEW_AGENT_TOKEN={token} {sys.executable} -m agentmcp --http 8765   (then "
        f"http://127.0.0.1:8765/mcp with the header Authorization: Bearer {http_token})",
    ]


def robot_lines(robot_url: str) -> list[str]:
    """How the team hears of new work (docs/api.md §15): the demo's own robot, and how to point a real one."""
    return [
        f"  Team robot  a demo WeCom group robot at {robot_url} prints each message here;",
        "              tell your group instead: NOTIFY_WECOM_WEBHOOK_URL=https://qyapi.weixin.qq.com/cgi-bin/"
        "webhook/send?key=<the robot's key> (or NOTIFY_FEISHU_*, NOTIFY_DINGTALK_*, NOTIFY_EMAIL_TO; README "
        '"Tell the team")',
    ]


def chat_settings(chat):
    """The demo's Feishu and WeCom apps: the fake's, their callbacks signed and encrypted."""
    return {
        "FEISHU_APP_ID": chat.app_id,
        "FEISHU_APP_SECRET": chat.app_secret,
        "FEISHU_VERIFICATION_TOKEN": "demo-feishu-token",
        "FEISHU_ENCRYPT_KEY": "demo-feishu-key",
        "FEISHU_CHAT_ID": "oc_demo_editors",
        "FEISHU_API_BASE": chat.base_url,
        "WECOM_CORP_ID": chat.corp_id,
        "WECOM_AGENT_ID": str(chat.agent_id),
        "WECOM_SECRET": chat.corp_secret,
        "WECOM_TOKEN": "demo-wecom-token",
        "WECOM_AES_KEY": DEMO_WECOM_KEY,
        "WECOM_TO_USERS": DEMO_WECOM,
        "WECOM_API_BASE": chat.base_url,
    }


def _listening(url, seconds=60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            requests.get(f"{url}/healthz", timeout=2)
            return True
        except requests.RequestException:
            time.sleep(0.2)
    return False


def _when_listening(fake, chat, url, edition):
    """Once the service answers: the platform's report of the demo's edition (its counts and links), and the
    chat card of the one-tap sample printed and clicked, as an editor would in the group (docs/api.md §22)."""
    if not _listening(url):
        return
    if edition:
        fake.push_mass_event(int(edition["msgId"]))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for message_id in list(chat.feishu_messages):
            card = chat.feishu_cards[message_id]["card"]
            value = _button(card, "approve_without_publish")
            if value is not None:
                print(f"[chat card, Feishu]\n{describe_card(card)}\n", flush=True)
                _status, answer = chat.click_feishu(
                    message_id,
                    value,
                    DEMO_FEISHU,
                    f"{url}/feishu/card",
                    "demo-feishu-token",
                    encrypt_key="demo-feishu-key",
                )
                toast = answer.get("toast", {}).get("content") if isinstance(answer, dict) else answer
                print(f"[chat click] {DEMO_ADMIN} tapped approve in Feishu: {toast}\n", flush=True)
                return
        time.sleep(0.3)


def _button(node, action):
    """The callback value of the card's `action` button, if it has one."""
    if isinstance(node, dict):
        for behavior in node.get("behaviors") or []:
            if behavior.get("type") == "callback" and behavior.get("value", {}).get("action") == action:
                return behavior["value"]
        node = list(node.values())
    if isinstance(node, list):
        return next((found for item in node if (found := _button(item, action)) is not None), None)
    return None


def start_demo_robot():
    """A fake WeCom group robot that prints what it gets, as a group chat would show it."""
    return FakeRobot("wecom", key="demo", on_message=lambda text: print(f"[team robot]\n{text}\n", flush=True))


def build_demo_app(create_app, overrides=None, exit_on_sigterm=True, latency=DEMO_LATENCY):
    """(app, banner lines): a fresh demo instance in a temporary folder, removed at exit. The fake
    platform answers after `latency` (seconds, ± jitter), as the real one does from afar."""
    fake, base_url = start_fake_platform()
    fake.set_latency(*latency)
    folder = Path(tempfile.mkdtemp(prefix="review-demo-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    atexit.register(fake.stop)
    robot = start_demo_robot()
    atexit.register(robot.stop)
    chat = FakeChatApps()
    chat.start()
    atexit.register(chat.stop)
    if exit_on_sigterm:  # `kill` ends the demo like Ctrl+C does, so the folder is removed too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # The demo never touches a configured instance: explicit paths win over the environment.
    config = {
        "REVIEW_INSTANCE_PATH": str(folder / "instance"),
        "REVIEW_UPLOADS_PATH": str(folder / "uploads"),
        "DATABASE_URL": "",
        **platform_settings(base_url),
        **safe_mode_settings(),
        "NOTIFY_WECOM_WEBHOOK_URL": robot.url,
    }
    # Its own tokens too: the banner prints them, and a real token from the environment must not be.
    client_token = "demo-client-" + secrets.token_urlsafe(12)
    config["REVIEW_AGENT_TOKEN"] = "demo-agent-" + secrets.token_urlsafe(16)
    config["FEEDBACK_CLIENT_TOKENS"] = f"demo-app={client_token}"
    # The links in the robot's messages open this demo (HOST and PORT as the service reads them).
    config["REVIEW_PUBLIC_URL"] = f"http://{os.environ.get('HOST') or '127.0.0.1'}:{os.environ.get('PORT') or 8000}"
    config["WECHAT_PUBLISH_POLL_DELAYS"] = "1,5,30,60"  # the demo's article goes live in seconds
    config.update(chat_settings(chat))
    app = create_app({**config, **(overrides or {})}, serve=True)  # the demo serves: its workers run
    password = secrets.token_urlsafe(12)

    with db.connection_context():
        save_admin(DEMO_ADMIN, password, "review,feedback")
        created = seed(app.extensions["settings"], DEMO_ADMIN)
        worker = app.config["WECHAT_LIVE_WORKER_ENABLED"]
        live = seed_live(app.extensions["settings"], DEMO_ADMIN, fake.set_publish_day) if worker else None
        comments = seed_comments(app.extensions["settings"], live, fake.add_comment) if live else None
        editions = app.config["WECHAT_EDITIONS_ENABLED"]
        edition = seed_edition(app.extensions["settings"], DEMO_ADMIN) if editions else None
        link_chat(DEMO_ADMIN, DEMO_FEISHU, DEMO_WECOM)
        tasks = task_count()  # the list's: the samples and the demo's further ones (seed_edition)
    url = f"http://{app.config['HOST']}:{app.config['PORT']}"
    push_events_to(fake, url, app.config)  # going live reaches a (fake) article URL
    threading.Thread(target=_when_listening, args=(fake, chat, url, edition), daemon=True).start()
    banner = [
        "",
        "Demo mode: everything lives in a temporary folder and is removed when you stop the server.",
        f"  Open        {url}/login",
        f"  User name   {DEMO_ADMIN}",
        f"  Password    {password}   (shown only now)",
        f"  Sample data {tasks} review tasks, {len(created['feedback'])} feedback records, "
        f"{len(created['library'])} library images",
        f"  WeChat      fake platform at {base_url} (drafts are kept in memory; each call takes "
        f"{latency[0] * 1000:g} ms ± {latency[1] * 1000:g} ms, as from afar)",
        f"  Agent token {app.config['REVIEW_AGENT_TOKEN']}   (header x-review-agent-token)",
        f"  Client token {client_token}   (header x-feedback-client-token, channel demo-app)",
        *mcp_lines(url, app.config["REVIEW_AGENT_TOKEN"]),
        *robot_lines(robot.url),
        f"  Chat apps   fake Feishu and WeCom apps at {chat.base_url}: a task that waits for review gets a card; "
        f"the demo taps one (printed here) as {DEMO_ADMIN}, linked with link-chat",
        *(
            [
                f"  Followers   yesterday's edition of {len(edition['taskIds'])} articles was sent to the fake "
                f"platform's followers (its counts and links arrive in a moment): {url}/editions; today's send "
                "is still free: approve and publish an article, then add it to today's edition from its page"
            ]
            if edition
            else []
        ),
        *callback_lines(url, app.config),
        *(
            [
                f'  Readers     "{live["topic"]}" is live on the fake platform ({live["live"]["articleUrl"]}), with a '
                f"week of reader figures: {url}/review/{live['id']}; publish another from its page"
            ]
            if live
            else []
        ),
        *(
            [
                f"  Comments    {len(comments['comments'])} readers' comments on it (one featured, one answered), the "
                f"newest with the agent's proposed reply waiting for an editor: "
                f"{url}/api/review/tasks/{live['id']}/comments"
            ]
            if live and comments and comments["comments"]
            else []
        ),
        "",
    ]
    return app, banner
