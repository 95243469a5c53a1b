"""What readers did (docs/api.md §19): daily figures of live articles, fetched, stored and read."""

from services.stats.fetching import fetch_day  # noqa: F401
from services.stats.reading import failure_words, task_stats, total_reads  # noqa: F401
