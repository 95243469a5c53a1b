"""Going live (docs/api.md §18): from the platform's draft box to readers, and back what happened."""

from services.live.golive import cancel_go_live, failure_words, go_live  # noqa: F401
from services.live.worker import live_job  # noqa: F401
