"""Helpers of the readers' comments tests (docs/api.md §23) and of the dataset's (§20): where a live task's
article is on the platform, the fetch command, and the dataset's lines as an HTTP client reads them."""

import json

from models import ReviewTask, TaskLive, db


def article(task):
    """(msg_data_id, index from 0) of a live task, as the platform's comment calls name it."""
    with db.connection_context():
        live = TaskLive.get(TaskLive.task == ReviewTask.get(ReviewTask.task_id == task["id"]).id)
    base, _, place = str(live.msg_data_id).partition("_")
    return base, int(place) - 1 if place else 0


def fetch(app, *args):
    """`flask --app app fetch-comments [args]` through the app's CLI runner; its output."""
    result = app.test_cli_runner().invoke(args=["fetch-comments", *args])
    assert result.exit_code == 0, result.output
    return result.output


def export(http, format, headers=None, **filters):
    """The lines of GET /api/review/dataset, each as its JSON value."""
    response = http.get("/api/review/dataset", query_string={"format": format, **filters}, headers=headers or {})
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    assert response.mimetype == "application/x-ndjson"
    text = response.get_data(as_text=True)
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]
