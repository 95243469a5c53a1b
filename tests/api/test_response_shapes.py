"""schemas.dump writes exactly what marshmallow's own dump() of the same schema writes (None values
aside, which the answers leave out unless the field allows null): one definition per answer."""

from models import Asset, Feedback, FeedbackAttachment, PublishJob, ReviewTask, TimelineEvent, db
from schemas.assets import AssetSchema
from schemas.dump import dumper
from schemas.feedback import FeedbackDetailSchema
from schemas.review import TaskSchema
from tests.helpers.feedback import image_bytes, payload, upload
from tests.helpers.review import article_payload, create_task, make_asset

WEB = {"x-feedback-client-token": "client-web-token"}


def _marshmallow(schema, row, **given):
    """marshmallow's dump of `row` with `given` attributes added, None values of non-null fields dropped."""

    class Row:
        def __getattr__(self, name):
            return given[name] if name in given else getattr(row, name)

    fields = schema._declared_fields
    dumped = schema().dump(Row())
    return {
        key: value
        for key, value in dumped.items()
        if value is not None or fields[next(n for n, f in fields.items() if (f.data_key or n) == key)].allow_none
    }


def test_a_task_with_jobs_and_events_dumps_as_its_schema(app, admin_client, agent_headers):
    cover = make_asset(app, 900, 500)
    task = create_task(admin_client, agent_headers, article_payload([cover["url"]], externalContentId="ext-1"))
    admin_client.post(
        f"/api/review/tasks/{task['id']}/decision",
        json={"action": "reject_rework", "rejectionReason": "other", "rejectionNote": None},
    )
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        events = list(TimelineEvent.select().where(TimelineEvent.task == row).order_by(TimelineEvent.id))
        PublishJob.create(
            job_id="job-1",
            task=row,
            status="failed",
            trigger_mode="manual",
            attempt_count=1,
            queued_at=row.created_at,
            snapshot={"title": "t"},
            last_error="boom",
        )
        jobs = list(PublishJob.select().where(PublishJob.task == row))
        fast = dumper(TaskSchema)(row, publishJobs=jobs, timeline=events)
        slow = _marshmallow(TaskSchema, row, publishJobs=jobs, timeline=events)
        slow["publishJobs"] = [
            _marshmallow(TaskSchema._declared_fields["publishJobs"].inner.nested, job) for job in jobs
        ]
    assert fast == slow
    assert fast["externalContentId"] == "ext-1" and "selections" not in fast  # absent until it exists
    assert fast["publishJobs"][0]["taskId"] == task["id"] and "draftMediaId" not in fast["publishJobs"][0]
    assert [event["type"] for event in fast["timeline"]] == ["task_created", "rejected"]
    assert admin_client.get(f"/api/review/tasks/{task['id']}").get_json()["timeline"] == fast["timeline"]


def test_feedback_and_assets_dump_as_their_schemas(app, client, admin_client):
    record = client.post("/api/feedbacks", json=payload(userId=None), headers=WEB).get_json()
    assert upload(client, record["id"], image_bytes(), "s.png", "screenshot").status_code == 201
    asset = make_asset(app, 900, 500)
    with db.connection_context():
        row = Feedback.get(Feedback.feedback_id == record["id"])
        attachments = list(FeedbackAttachment.select().where(FeedbackAttachment.feedback == row))
        fast = dumper(FeedbackDetailSchema)(row, attachments=attachments)
        slow = _marshmallow(FeedbackDetailSchema, row, attachments=attachments)
        stored = Asset.get(Asset.asset_id == asset["assetId"])
        assert dumper(AssetSchema)(stored) == _marshmallow(AssetSchema, stored)
    assert fast == slow
    assert fast["userId"] is None and "userId" in fast  # a nullable field is sent as null
    assert admin_client.get(f"/api/feedbacks/{record['id']}").get_json() == fast
