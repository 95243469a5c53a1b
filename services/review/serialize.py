"""ReviewTask rows -> the camelCase JSON of the spec; optional parts are absent until they exist."""
import json

from models.base import as_models, cached_select, quote_name, run_statement
from models.review import PublishJob, ReviewTask, TimelineEvent
from schemas.dump import dumper
from schemas.review import TaskSchema

_dump_task = dumper(TaskSchema)


def _task_dict(task, events, jobs):
    """The task as TaskSchema says (its jobs by queuedAt, its events in order of writing)."""
    return _dump_task(task, publishJobs=jobs, timeline=events)


def tasks_to_dicts(tasks):
    """Many tasks with their jobs and events in three queries (no per-task lookups)."""
    tasks = list(tasks)
    if not tasks:
        return []
    by_pk = {task.id: task for task in tasks}
    events, jobs = {pk: [] for pk in by_pk}, {pk: [] for pk in by_pk}
    pks, size = list(by_pk), len(by_pk)
    for event in cached_select(TimelineEvent, ("events_of", size), lambda: TimelineEvent.select().where(
            TimelineEvent.task.in_([0] * size)).order_by(TimelineEvent.id), *pks):
        events[event.task_id].append(event)
    for job in cached_select(PublishJob, ("jobs_of", size), lambda: PublishJob.select().where(
            PublishJob.task.in_([0] * size)).order_by(PublishJob.queued_at, PublishJob.id), *pks):
        job.task = by_pk[job.task_id]  # no extra query for job.task.task_id
        jobs[job.task_id].append(job)
    return [_task_dict(task, events[task.id], jobs[task.id]) for task in tasks]


def task_to_dict(task, events=None, jobs=None):
    """One task with its publish jobs (by queuedAt) and timeline (in order of writing); both are
    read from the database unless the caller, having just written them all, passes them."""
    if events is not None and jobs is not None:
        return _task_dict(task, events, jobs)
    return tasks_to_dicts([task])[0]


def _children_json(model, order):
    """SQL: the rows of `model` belonging to task `t`, as one JSON array of arrays (SQLite json1)."""
    meta = model._meta
    columns = ", ".join(quote_name(field.column_name) for field in meta.sorted_fields)
    return (f"(SELECT json_group_array(json_array({columns})) FROM (SELECT * FROM {quote_name(meta.table_name)} "  # noqa: S608
            f"WHERE task_id = t.id ORDER BY {order}))")


def _detail_sql():
    return (f'SELECT t.*, {_children_json(TimelineEvent, "id")}, {_children_json(PublishJob, "queued_at, id")} '  # noqa: S608
            f"FROM {quote_name(ReviewTask._meta.table_name)} AS t WHERE t.task_id = ? LIMIT 1")


def task_detail(task_id):
    """One task as JSON, or None: the task, its jobs and its events read by one statement (SQLite).

    One statement is one snapshot, so the parts agree without a transaction; the task page is the
    hottest read and this is a third of the SQLite calls of task_to_dict(get_task_row()).
    """
    rows, description, _ = run_statement("task_detail", _detail_sql, task_id)
    if not rows:
        return None
    *task_values, events_json, jobs_json = rows[0]
    columns = ReviewTask._meta.columns
    task = as_models(ReviewTask, [columns[column[0]] for column in description[:-2]], [task_values])[0]
    events = as_models(TimelineEvent, TimelineEvent._meta.sorted_fields, json.loads(events_json))
    jobs = as_models(PublishJob, PublishJob._meta.sorted_fields, json.loads(jobs_json))
    for job in jobs:
        job.task = task
    # json_group_array keeps its input's order in practice, but SQL does not promise it.
    return _task_dict(task, sorted(events, key=lambda event: event.id),
                      sorted(jobs, key=lambda job: (job.queued_at, job.id)))
