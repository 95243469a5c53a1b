"""The review workflow (no Flask here). What other areas call:

    create_task(payload, idempotency_key)       -> (status, task JSON, replayed)
    get_task(task_id)                           -> task JSON (404 NotFound)
    list_tasks(filters)                         -> (task JSONs, total, next cursor)
    status_counts(filters)                      -> {"all": n, status: n} (the list's other filters)
    form_state(task JSON) / preview_body(markdown, theme, overrides)  (the review page)
    patch_elements(task_id, patch, settings, if_match=)    -> task JSON (read inside the write)
    decide(task_id, payload, settings, actor_name=, if_match=) -> task JSON (read inside the write)
    apply_decision(…same…)                      -> ReviewTask row (inside a caller's immediate())
    task_to_dict(row)                           -> task JSON

Writers in other areas (publishing, delete) use, inside `models.immediate()`:
    load_for_update(task_id, if_match)  (404, 412) -> row
    state_machine.rule_for(row.status, trigger) / fire(row, trigger, actor, actor_name, data)  (409 invalid_state)
    save_task(row)                      (version + 1, updatedAt)
    add_event(row, type, actor, actor_name, data)
The state table is services/review/state_machine.py (TABLE); docs/review-states.md is generated from it.
"""

from services.review.concurrency import load_for_update, save_task  # noqa: F401
from services.review.creation import create_task  # noqa: F401
from services.review.decisions import apply_decision, decide  # noqa: F401
from services.review.form import form_state, preview_body  # noqa: F401
from services.review.patching import patch_elements  # noqa: F401
from services.review.queries import get_task, list_tasks, status_counts  # noqa: F401
from services.review.serialize import task_to_dict  # noqa: F401
from services.review.state_machine import fire  # noqa: F401
from services.review.timeline import add_event  # noqa: F401
