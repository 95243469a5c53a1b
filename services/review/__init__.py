"""The review workflow (no Flask here): what other areas call is imported below. Writers in other areas use,
inside `models.immediate()`, load_for_update (404, 412), state_machine.rule_for / fire (409 invalid_state),
save_task (version + 1) and add_event; the state table is services/review/state_machine.py.
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
