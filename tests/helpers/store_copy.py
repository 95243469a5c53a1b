"""A populated instance and its answers, for copying between stores (copy-to)."""

import io

from tests.helpers.app import AGENT_TOKEN, create_admin, login
from tests.helpers.feedback import WEB, payload, submit
from tests.helpers.publishing import approved_article, publish
from tests.helpers.review import article_payload, create_task, decision_url, make_asset, patch_url

AGENT = {"x-review-agent-token": AGENT_TOKEN}


def populate(app, fake):
    """Tasks in every state (a published one with its job, a reworked one), feedback with an
    attachment, assets, two admins, outbox messages."""
    create_admin()
    create_admin("triage", permissions="feedback")
    admin = app.test_client()
    login(admin)
    published, _ = approved_article(app, admin, AGENT)
    publish(admin, published)
    cover = make_asset(app, 900, 500)
    pending = create_task(admin, AGENT, article_payload([cover["url"]]))
    reworked = create_task(admin, AGENT, article_payload([cover["url"]]))
    assert (
        admin.post(
            decision_url(reworked),
            json={"action": "reject_rework", "rejectionReason": "other", "rejectionNote": "整体重写"},
        ).status_code
        == 200
    )
    assert admin.patch(patch_url(reworked), json={"title": "改过的标题"}, headers=AGENT).status_code == 200
    feedback = [submit(app.test_client(), payload(title=f"问题 {n}", content=f"内容 {n}")).get_json() for n in range(3)]
    attached = app.test_client().post(
        f"/api/feedbacks/{feedback[0]['id']}/attachments",
        headers=WEB,
        data={"kind": "log_file", "file": (io.BytesIO(b"log line\n"), "app.log", "text/plain")},
    )
    assert attached.status_code == 201, attached.get_json()
    assert (
        admin.patch(
            f"/api/feedbacks/{feedback[1]['id']}/status", json={"status": "processed", "adminNote": "已修复"}
        ).status_code
        == 200
    )
    return [published["id"], pending["id"], reworked["id"]], [f["id"] for f in feedback]


def answers(app, task_ids, feedback_ids):
    admin = app.test_client()
    login(admin)
    tasks = {task_id: admin.get(f"/api/review/tasks/{task_id}").get_json() for task_id in task_ids}
    records = {fid: admin.get(f"/api/feedbacks/{fid}").get_json() for fid in feedback_ids}
    listing = admin.get("/api/review/tasks?status=all").get_json()
    return tasks, records, [task["id"] for task in listing]
