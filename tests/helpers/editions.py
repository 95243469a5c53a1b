"""Editions (docs/api.md §21): published articles to put in one, and waiting for its end."""
import time

from tests.helpers.review import approve_article, article_payload, create_task, decision_url, make_asset


def published_articles(app, admin_client, agent_headers, count, account="silicon-rise"):
    """`count` article tasks published as platform drafts, each with its own title; their JSON."""
    tasks = []
    for number in range(1, count + 1):
        payload = article_payload(publicAccount=account, topic=f"topic {number}")
        payload["candidates"]["titles"] = [f"第{number}篇：芯片的未来"]
        task = create_task(admin_client, agent_headers, payload)
        answer = admin_client.post(decision_url(task), json=approve_article(
            task, make_asset(app, 900, 500), action="approve_and_publish"))
        assert answer.status_code == 200 and answer.get_json()["status"] == "published", answer.get_json()
        tasks.append(answer.get_json())
    return tasks


def wait_for_edition(client, edition, statuses=("sent", "failed"), seconds=15, **kwargs):
    """The edition once its status is one of `statuses`."""
    deadline = time.monotonic() + seconds
    while True:
        current = client.get(f"/api/editions/{edition['id']}", **kwargs).get_json()
        if current["status"] in statuses:
            return current
        assert time.monotonic() < deadline, current
        time.sleep(0.05)
