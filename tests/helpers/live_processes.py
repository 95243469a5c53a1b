"""`python app.py` processes going live on one store, the fake platform in the test (tests/live)."""

from contextlib import contextmanager

import requests
from playhouse.db_url import connect

from tests.helpers.publishing import ACCOUNTS
from tests.helpers.review import article_payload, png_bytes
from tests.helpers.served import METRICS_TOKEN, _serve

AGENT = {"x-review-agent-token": "live-processes-agent-token-0123456789"}
PASSWORD = "a long enough password"


def process_settings(database_url, fake):
    values = {
        "DATABASE_URL": database_url,
        "REVIEW_AGENT_TOKEN": AGENT["x-review-agent-token"],
        "REVIEW_ADMIN_USERNAME": "admin",
        "REVIEW_ADMIN_PASSWORD": PASSWORD,
        "WECHAT_API_BASE": fake.base_url,
        "WECHAT_PUBLISH_POLL_DELAYS": "0.3,0.6,1.2,2.4",
        "WECHAT_TIMEOUT_SECONDS": "60",
        "METRICS_TOKEN": METRICS_TOKEN,
    }
    for account, (appid, secret) in ACCOUNTS.items():
        prefix = "WECHAT_" + account.upper().replace("-", "_")
        values[prefix + "_APPID"], values[prefix + "_SECRET"] = appid, secret
    return values


@contextmanager
def service(tmp_path, settings, log_path=None):
    with _serve(tmp_path, settings, log_path=log_path) as (base, _port, process):
        session = requests.Session()
        answer = session.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert answer.status_code == 303, answer.text
        yield base, session, process


def published(base, session):
    """A task published as a platform draft through the HTTP API."""
    cover = requests.post(
        f"{base}/api/assets/upload",
        headers=AGENT,
        timeout=30,
        files={"file": ("cover.png", png_bytes(900, 500), "image/png")},
    ).json()
    task = requests.post(
        f"{base}/api/review/agent/tasks", json=article_payload([cover["url"]]), headers=AGENT, timeout=30
    ).json()
    option = task["candidates"]["bodyOptions"][0]
    answer = session.post(
        f"{base}/api/review/tasks/{task['id']}/decision",
        timeout=60,
        json={
            "action": "approve_and_publish",
            "selections": {
                "title": task["candidates"]["titles"][0],
                "summary": "摘要",
                "body": option["content"],
                "coverImage": {"assetId": cover["assetId"]},
            },
        },
    )
    assert answer.status_code == 200 and answer.json()["status"] == "published", answer.text[:500]
    return answer.json()


def live_of(base, session, task):
    return session.get(f"{base}/api/review/tasks/{task['id']}", timeout=10).json()["live"]


def store_of(tmp_path, settings):
    """The processes' database (theirs, not the test app's), for a test to change what they stored."""
    return connect(settings["DATABASE_URL"] or f"sqlite:///{tmp_path / 'instance' / 'review.db'}")
