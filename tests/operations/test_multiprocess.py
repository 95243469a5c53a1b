"""Several service processes on one database (README: a team that outgrows one process), on each
store: three `python app.py` processes share one PostgreSQL database or one SQLite file, with
clients spread across them, and the guarantees of one process still hold."""

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager

import pytest
import requests

from tests.helpers.publishing import ACCOUNTS
from tests.helpers.review import article_payload, png_bytes
from tests.helpers.served import METRICS_TOKEN, served, wait_for_passes

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": "multi-process-agent-token-0123456789"}
CLIENT = {"x-feedback-client-token": "multi-process-client-token"}
PASSWORD = "a long enough password"
PROCESSES = 3


@contextmanager
def service(tmp_path, database_url, **settings):
    """One `python app.py`; every process of a test shares the instance and uploads folders."""
    with served(
        tmp_path,
        DATABASE_URL=database_url,
        REVIEW_AGENT_TOKEN=AGENT["x-review-agent-token"],
        FEEDBACK_CLIENT_TOKENS=f"web={CLIENT['x-feedback-client-token']}",
        REVIEW_ADMIN_USERNAME="admin",
        REVIEW_ADMIN_PASSWORD=PASSWORD,
        WEBHOOK_SENDER_ENABLED="true",
        TEAM_MESSAGES_ENABLED="true",
        CHAT_CARDS_ENABLED="true",
        **settings,
    ) as (base, _port):
        yield base


@pytest.fixture
def services(tmp_path, database_url, fake, receiver):
    """Three processes started at the same moment (the schema upgrade races too)."""
    settings = {
        "FEEDBACK_RATE_LIMIT_PER_IP": "14/minute",
        "FEEDBACK_RATE_LIMIT_PER_DEVICE": "",
        "WECHAT_API_BASE": fake.base_url,
        "REVIEW_AGENT_WEBHOOK_URL": receiver.url,
        "REVIEW_WEBHOOK_RETRY_DELAYS": "1,1,1",
        "METRICS_TOKEN": METRICS_TOKEN,
    }
    for account, (appid, secret) in ACCOUNTS.items():
        prefix = "WECHAT_" + account.upper().replace("-", "_")
        settings[prefix + "_APPID"], settings[prefix + "_SECRET"] = appid, secret
    with ExitStack() as stack, ThreadPoolExecutor(PROCESSES) as pool:
        starting = [
            pool.submit(lambda: stack.enter_context(service(tmp_path, database_url, **settings)))
            for _ in range(PROCESSES)
        ]
        yield [future.result() for future in starting]


def signed_in(base):
    session = requests.Session()
    answer = session.post(
        f"{base}/api/auth/login", data={"username": "admin", "password": PASSWORD}, allow_redirects=False, timeout=10
    )
    assert answer.status_code == 303 and "error" not in answer.headers["Location"], answer.headers
    return session


def feedback(n=0):
    return {
        "appName": "multi",
        "appVersion": "1.0",
        "platform": "web",
        "type": "bug",
        "title": f"标题 {n}",
        "content": f"同一个问题的描述 {n}",
    }


def test_several_processes_keep_the_guarantees_of_one(services, fake, receiver):
    # 10 identical feedback POSTs spread over the processes at once: exactly one is created.
    with ThreadPoolExecutor(10) as pool:
        answers = list(
            pool.map(
                lambda i: requests.post(
                    f"{services[i % PROCESSES]}/api/feedbacks", json=feedback(), headers=CLIENT, timeout=30
                ),
                range(10),
            )
        )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] + [409] * 9, [a.text[:200] for a in answers]
    created = next(a.json() for a in answers if a.status_code == 201)
    assert {a.json()["error"]["details"]["feedbackId"] for a in answers if a.status_code == 409} == {created["id"]}

    # The per-address limit (14 a minute) holds across the processes: 10 used above, 4 more fit.
    more = [
        requests.post(
            f"{services[n % PROCESSES]}/api/feedbacks", json=feedback(n), headers=CLIENT, timeout=30
        ).status_code
        for n in range(1, 7)
    ]
    assert sorted(more) == [201] * 4 + [429] * 2, more

    # One Idempotency-Key sent to every process at once: one task, and every answer names it.
    keyed = {**AGENT, "Idempotency-Key": "same-key-everywhere"}
    with ThreadPoolExecutor(6) as pool:
        creations = list(
            pool.map(
                lambda i: requests.post(
                    f"{services[i % PROCESSES]}/api/review/agent/tasks",
                    json=article_payload(),
                    headers=keyed,
                    timeout=30,
                ),
                range(6),
            )
        )
    assert sorted(c.status_code for c in creations) == [201] * 6, [c.text[:200] for c in creations]
    assert len({c.json()["id"] for c in creations}) == 1
    assert sum(c.headers.get("Idempotent-Replayed") == "true" for c in creations) == 5

    # Two publishes of one task on two processes: one draft.
    cover = requests.post(
        f"{services[0]}/api/assets/upload",
        headers=AGENT,
        timeout=30,
        files={"file": ("cover.png", png_bytes(900, 500), "image/png")},
    ).json()
    task = requests.post(
        f"{services[0]}/api/review/agent/tasks", json=article_payload([cover["url"]]), headers=AGENT, timeout=30
    ).json()
    admins = [signed_in(base) for base in services]
    option = task["candidates"]["bodyOptions"][0]
    approved = admins[1].post(
        f"{services[1]}/api/review/tasks/{task['id']}/decision",
        timeout=30,
        json={
            "action": "approve_without_publish",
            "selections": {
                "title": task["candidates"]["titles"][0],
                "summary": "摘要",
                "body": option["content"],
                "coverImage": {"assetId": cover["assetId"]},
            },
        },
    )
    assert approved.status_code == 200, approved.text
    fake.set_latency(0.3)  # both requests are in flight together
    barrier = threading.Barrier(2)

    def publish(i):
        barrier.wait()
        return admins[i].post(f"{services[i]}/api/review/tasks/{task['id']}/publish-jobs", timeout=60)

    with ThreadPoolExecutor(2) as pool:
        published = list(pool.map(publish, (0, 2)))
    fake.set_latency(0)
    assert sorted(p.status_code for p in published) == [200, 409], [p.text[:300] for p in published]
    assert len(fake.drafts) == 1 and len(fake.requests_to("draft/add")) == 1

    # Two tasks with the same images published at the same moment on two processes: each image is
    # uploaded once for the account (the claim row in the shared database).
    shared = [
        requests.post(
            f"{services[0]}/api/assets/upload",
            headers=AGENT,
            timeout=30,
            files={"file": (f"{n}.png", png_bytes(800 + n, 450), "image/png")},
        ).json()
        for n in range(3)
    ]
    body = "# 同图\n\n" + "\n\n".join(f"![图]({image['url']})" for image in shared[1:])
    twins = []
    for number in range(2):
        payload = article_payload([shared[0]["url"]])
        payload["candidates"]["bodyOptions"][0]["content"] = body
        twin = requests.post(
            f"{services[number]}/api/review/agent/tasks", json=payload, headers=AGENT, timeout=30
        ).json()
        decided = admins[number].post(
            f"{services[number]}/api/review/tasks/{twin['id']}/decision",
            timeout=30,
            json={
                "action": "approve_without_publish",
                "selections": {
                    "title": twin["candidates"]["titles"][0],
                    "summary": "摘要",
                    "body": body,
                    "coverImage": {"assetId": shared[0]["assetId"]},
                },
            },
        )
        assert decided.status_code == 200, decided.text
        twins.append(twin)
    fake.requests.clear()
    fake.set_latency(0.3)
    barrier = threading.Barrier(2)

    def publish_twin(number):
        barrier.wait()
        return admins[number].post(
            f"{services[number]}/api/review/tasks/{twins[number]['id']}/publish-jobs", timeout=60
        )

    with ThreadPoolExecutor(2) as pool:
        assert [p.status_code for p in pool.map(publish_twin, (0, 1))] == [200, 200]
    fake.set_latency(0)
    uploads = [
        (r["path"].rsplit("/", 1)[1], r["files"]["media"]["data"])
        for r in fake.requests
        if r["path"].endswith(("add_material", "uploadimg"))
    ]
    assert len(uploads) == len(set(uploads)) == 3, [kind for kind, _ in uploads]  # cover material + 2 body

    # One rejection, three webhook senders: one webhook.
    other = requests.post(
        f"{services[2]}/api/review/agent/tasks", json=article_payload([cover["url"]]), headers=AGENT, timeout=30
    ).json()
    rejected = admins[0].post(
        f"{services[0]}/api/review/tasks/{other['id']}/decision",
        timeout=30,
        json={"action": "reject_rework", "rejectionReason": "other"},
    )
    assert rejected.status_code == 200, rejected.text
    assert receiver.wait_for(1, timeout=20)
    wait_for_passes(services, "webhook-sender")  # every sender has looked at the outbox since
    assert len(receiver.received) == 1
