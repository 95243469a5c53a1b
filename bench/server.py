"""The service under benchmark, plus a bare Flask endpoint on the same server as the baseline.

Run by bench/common.py as a subprocess: python bench/server.py INSTANCE UPLOADS PORT [unstored]
(BENCH_DATABASE_URL in the environment: that database instead of the instance's SQLite file)

`unstored` (bench/ceiling.py only) swaps the two creation services for copies that build the same
reply without the database, to show what the routes would cost if storage were free.
"""

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import waitress

from app import create_app
from bench.settings import BENCH_CONFIG


def _unstored_task(payload, idempotency_key=None):
    from models.review import ReviewTask, TimelineEvent
    from rules.ids import new_id, now_iso
    from services.review.serialize import task_to_dict
    from services.review.state_machine import find_rule

    now, rule = now_iso(), find_rule(None, "create")  # the state and events the real creation uses
    task = ReviewTask(
        task_id=new_id(),
        public_account=payload["publicAccount"],
        content_type=payload["contentType"],
        topic=payload["topic"],
        external_content_id=payload.get("externalContentId"),
        status=rule.next_state,
        candidates=payload["candidates"],
        version=1,
        created_at=now,
        updated_at=now,
    )
    events = [
        TimelineEvent(
            event_id=new_id(),
            task=task,
            type=event,
            at=now,
            actor="agent",
            data={"contentType": task.content_type, "publicAccount": task.public_account},
        )
        for event in rule.events
    ]
    return 201, task_to_dict(task, events=events, jobs=[]), False


def _unstored_feedback(data, channel, client_ip):
    from models.feedback import Feedback
    from rules.ids import iso, new_id, utcnow
    from services.feedback.intake import FIELD_MAP, fingerprint
    from services.feedback.queries import dump_detail

    now = utcnow()
    record = Feedback(
        feedback_id=new_id(),
        feedback_no=f"FB-{now:%Y%m%d}-0001",
        channel=channel,
        status="unprocessed",
        fingerprint=fingerprint(channel, data, client_ip),
        client_ip=client_ip,
        created_at=iso(now),
        updated_at=iso(now),
        **{FIELD_MAP[key]: value for key, value in data.items() if key in FIELD_MAP},
    )
    return dump_detail(record, attachments=[])


def main():
    # Access logs off: measure the app, not the terminal. Before create_app, which otherwise sets up
    # INFO logging itself (as for waitress-serve).
    logging.basicConfig(level=logging.ERROR)
    instance, uploads, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if sys.argv[4:] == ["unstored"]:
        import services.feedback.intake
        import services.review

        services.review.create_task = _unstored_task
        services.feedback.intake.create_feedback = _unstored_feedback
    app = create_app(
        {
            **BENCH_CONFIG,
            "REVIEW_INSTANCE_PATH": instance,
            "REVIEW_UPLOADS_PATH": uploads,
            "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", ""),
        },
        serve=True,
    )

    @app.get("/__bench/bare")
    def bare():
        return {"ok": True}

    waitress.serve(app, host="127.0.0.1", port=port, threads=8, ident="bench", _quiet=True)


if __name__ == "__main__":
    main()
