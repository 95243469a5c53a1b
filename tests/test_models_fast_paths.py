"""The cached INSERT/UPDATE of BaseModel.save and prepared_select agree with peewee's own queries."""
import peewee
import pytest

from models import db
from models.base import BaseModel, JSONField, prepared_select


class Note(BaseModel):
    title = peewee.CharField()
    body = JSONField(null=True)
    count = peewee.IntegerField(default=0)
    parent = peewee.ForeignKeyField("self", null=True, backref="children")


@pytest.fixture
def notes(app):
    with db.connection_context():
        db.create_tables([Note])
        yield
        db.drop_tables([Note])


def _raw(pk):
    return db.execute_sql('SELECT title, body, count, parent_id FROM note WHERE id = ?', (pk,)).fetchone()


def test_insert_then_update_writes_what_peewee_reads_back(notes):
    parent = Note.create(title="parent", body={"a": [1, "二"]})
    child = Note.create(title="child", parent=parent)
    assert (parent.id, child.id) == (1, 2)
    assert _raw(child.id) == ("child", None, 0, 1)
    assert not child.dirty_fields

    child.title, child.body, child.count = "renamed", {"k": "v"}, 5
    assert child.save() == 1
    assert _raw(child.id) == ("renamed", '{"k":"v"}', 5, 1)
    again = Note.get_by_id(child.id)
    assert (again.title, again.body, again.count, again.parent_id) == ("renamed", {"k": "v"}, 5, 1)


def test_update_of_a_missing_row_reports_zero_rows(notes):
    ghost = Note(id=99, title="ghost")
    assert ghost.save() == 0
    assert Note.select().count() == 0


def test_force_insert_keeps_the_given_key(notes):
    Note(id=7, title="seven").save(force_insert=True)
    assert _raw(7) == ("seven", None, 0, None)


def test_sql_expressions_still_go_through_peewee(notes):
    note = Note.create(title="counter", count=1)
    note.count = Note.count + 41
    note.save()
    assert Note.get_by_id(note.id).count == 42


def test_prepared_select_matches_peewee_and_reuses_its_sql(notes):
    for n in range(3):
        Note.create(title=f"n{n}", body={"n": n}, count=n)

    def fetch(low):
        return prepared_select(Note, "notes_from", lambda: Note.select().where(Note.count >= 0).order_by(Note.id), low)

    first, second = fetch(1), fetch(2)
    expected = list(Note.select().where(Note.count >= 1).order_by(Note.id))
    assert [n.__data__ for n in first] == [n.__data__ for n in expected]
    assert [n.body for n in second] == [{"n": 2}]
    assert not first[0].dirty_fields
    first[0].title = "changed"
    first[0].save()
    assert Note.get_by_id(first[0].id).title == "changed"


def test_one_statement_task_detail_equals_the_general_serializer(app, client, agent_headers):
    from models.review import PublishJob, ReviewTask
    from services.review.concurrency import get_task_row
    from services.review.serialize import task_detail, task_to_dict
    from services.review.timeline import add_event
    from tests.review_helpers import article_payload, create_task

    task_id = create_task(client, agent_headers, article_payload())["id"]
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task_id)
        add_event(row, "draft_saved", "admin", "alice", {"fields": ["title"], "note": "二"})
        for n, queued in enumerate(["2026-11-21T10:00:02.000Z", "2026-11-21T10:00:01.000Z"]):
            PublishJob.create(job_id=f"job-{n}", task=row, status="failed", trigger_mode="manual",
                              queued_at=queued, last_error="timeout", snapshot={"title": "t", "n": n})
        expected = task_to_dict(get_task_row(task_id))
        assert task_detail(task_id) == expected
        assert [job["id"] for job in expected["publishJobs"]] == ["job-1", "job-0"]
        assert [event["type"] for event in expected["timeline"]] == ["task_created", "draft_saved"]
        assert task_detail("no-such-task") is None
