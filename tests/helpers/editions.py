"""Editions (docs/api.md §21): published articles to put in one, proposing and sending it, waiting for its end."""

from models import OutboxMessage, db
from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset
from tests.helpers.waiting import wait_for


def published_articles(app, admin_client, agent_headers, count, account="silicon-rise"):
    """`count` article tasks published as platform drafts, each with its own title; their JSON."""
    tasks = []
    for number in range(1, count + 1):
        payload = article_payload(publicAccount=account, topic=f"topic {number}")
        payload["candidates"]["titles"] = [f"第{number}篇：芯片的未来"]
        task = create_task(admin_client, agent_headers, payload)
        answer = admin_client.post(
            decision_url(task), json=approve_article(task, make_asset(app, 900, 500), action="approve_and_publish")
        )
        assert answer.status_code == 200 and answer.get_json()["status"] == "published", answer.get_json()
        tasks.append(answer.get_json())
    return tasks


def wait_for_edition(client, edition, statuses=("sent", "failed"), seconds=15, **kwargs):
    """The edition once its status is one of `statuses`."""
    return wait_for(
        lambda: client.get(f"/api/editions/{edition['id']}", **kwargs).get_json(),
        lambda current: current["status"] in statuses,
        seconds,
        f"the edition not {' or '.join(statuses)}",
    )


def outbox(event_type):
    with db.connection_context():
        return [
            m.payload
            for m in OutboxMessage.select().where(OutboxMessage.event_type == event_type).order_by(OutboxMessage.id)
        ]


def propose(client, tasks, headers=None, account="silicon-rise"):
    answer = client.post(
        "/api/editions", json={"account": account, "taskIds": [t["id"] for t in tasks]}, headers=headers or {}
    )
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def send_edition(admin_client, edition, **body):
    answer = admin_client.post(f"/api/editions/{edition['id']}/send", json=body)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()
