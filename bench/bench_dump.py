"""The answer dumpers (schemas.dump) against marshmallow's own dump() and a hand-written dict, in one
process: python bench/bench_dump.py. A task with 6 events and 2 jobs, the shape of a reviewed task."""

import timeit
from types import SimpleNamespace

from schemas.dump import dumper
from schemas.review import TaskSchema

EVENT = SimpleNamespace(
    event_id="e",
    type="approved",
    at="2026-11-25T00:00:00.000Z",
    actor="admin",
    actor_name="alice",
    data={"approved": {"action": "approve_without_publish"}},
)
TASK = SimpleNamespace(
    task_id="t",
    public_account="silicon-rise",
    topic="芯片",
    content_type="article",
    external_content_id=None,
    context=None,
    candidates={"titles": ["a", "b"], "bodyOptions": []},
    status="approved",
    selections={"title": "a"},
    manual_overrides=None,
    body_draft={"markdown": "# x"},
    rejected_elements=None,
    locked_selections=None,
    rejection_reason=None,
    rejection_note=None,
    version=3,
    created_at="2026-11-25T00:00:00.000Z",
    updated_at="2026-11-25T00:00:00.000Z",
)
JOB = SimpleNamespace(
    job_id="j",
    task=TASK,
    status="succeeded",
    trigger_mode="manual",
    attempt_count=1,
    draft_media_id="m",
    queued_at="x",
    started_at="x",
    finished_at="x",
    last_error=None,
    snapshot={"title": "a"},
    retry_of=None,
)


def by_hand(task, events, jobs):
    """What services/review/serialize.py wrote by hand before the schemas did."""
    out = {
        "id": task.task_id,
        "publicAccount": task.public_account,
        "topic": task.topic,
        "contentType": task.content_type,
    }
    if task.external_content_id is not None:
        out["externalContentId"] = task.external_content_id
    out["context"] = task.context
    out["candidates"], out["status"] = task.candidates, task.status
    for key, value in (
        ("selections", task.selections),
        ("manualOverrides", task.manual_overrides),
        ("bodyDraft", task.body_draft),
        ("rejectedElements", task.rejected_elements),
        ("lockedSelections", task.locked_selections),
        ("rejectionReason", task.rejection_reason),
        ("rejectionNote", task.rejection_note),
    ):
        if value is not None:
            out[key] = value
    out["publishJobs"] = [
        {
            k: v
            for k, v in {
                "id": j.job_id,
                "taskId": j.task.task_id,
                "status": j.status,
                "triggerMode": j.trigger_mode,
                "attemptCount": j.attempt_count,
                "queuedAt": j.queued_at,
                "draftMediaId": j.draft_media_id,
                "startedAt": j.started_at,
                "finishedAt": j.finished_at,
                "lastError": j.last_error,
                "snapshot": j.snapshot,
                "retryOf": j.retry_of,
            }.items()
            if v is not None
        }
        for j in jobs
    ]
    out["timeline"] = [
        {"id": e.event_id, "type": e.type, "at": e.at, "actor": e.actor, "actorName": e.actor_name, "data": e.data}
        for e in events
    ]
    out.update(version=task.version, createdAt=task.created_at, updatedAt=task.updated_at)
    return out


def main():
    events, jobs = [EVENT] * 6, [JOB] * 2
    fast = dumper(TaskSchema)
    schema = TaskSchema()
    row = SimpleNamespace(**vars(TASK), publishJobs=jobs, timeline=events)
    number = 20000
    hand = min(timeit.repeat(lambda: by_hand(TASK, events, jobs), number=number, repeat=5)) / number
    compiled = (
        min(timeit.repeat(lambda: fast(TASK, publishJobs=jobs, timeline=events), number=number, repeat=5)) / number
    )
    slow = min(timeit.repeat(lambda: schema.dump(row), number=number // 10, repeat=3)) / (number // 10)
    print(f"hand-written dict  {hand * 1e6:7.1f} µs  1.00x")
    print(f"schemas.dump       {compiled * 1e6:7.1f} µs  {compiled / hand:.2f}x")
    print(f"marshmallow dump() {slow * 1e6:7.1f} µs  {slow / hand:.2f}x")


if __name__ == "__main__":
    main()
