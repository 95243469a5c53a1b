"""Prometheus metrics (docs/api.md §11; docs/operations.md "Metrics") through prometheus-client. The store's
numbers are read from the database at each scrape; its counters are counted at the event (models/counters.py),
never from rows that can be deleted.
"""

from collections.abc import Iterator

import peewee
from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from models import Feedback, OutboxMessage, ReviewTask
from models.counters import series
from rules.vocabulary import FEEDBACK_STATUSES, STATUSES
from services.background import PASSES
from services.feedback.queries import status_counts
from services.team.sender import NOTIFICATIONS, OUTCOMES

# Label values never come from the request unchecked: other methods are counted as "other".
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})

# Why the feedback route refused a submission, by the status it answered.
FEEDBACK_REFUSALS = {429: "rate_limited", 409: "duplicate", 413: "too_large", 400: "invalid"}


def _grouped(*columns: peewee.Field) -> Iterator[tuple]:
    query = columns[0].model.select(*columns, peewee.fn.COUNT(peewee.SQL("*"))).group_by(*columns)
    return query.tuples().iterator()


def _pending_by_channel(channels: tuple[str, ...]) -> Iterator[tuple]:
    if not channels:
        return iter(())
    query = (
        OutboxMessage.select(OutboxMessage.channel, peewee.fn.COUNT(peewee.SQL("*")))
        .where((OutboxMessage.status == "pending") & OutboxMessage.channel.in_(list(channels)))
        .group_by(OutboxMessage.channel)
    )
    return query.tuples().iterator()


class StoreCollector:
    """Numbers read from the store at scrape time (the caller holds a database connection).
    `sent_events`: the agent's event types the sender will send (none without a webhook URL);
    `team_channels`: the team's configured channels (docs/api.md §15)."""

    def __init__(self, sent_events: frozenset[str], team_channels: tuple[str, ...] = ()) -> None:
        self.sent_events = sent_events
        self.team_channels = team_channels

    def collect(self) -> Iterator[Metric]:
        tasks = GaugeMetricFamily("review_tasks", "Review tasks by status", labels=["status"])
        counts = dict.fromkeys(STATUSES, 0) | dict(_grouped(ReviewTask.status))
        for status, count in counts.items():
            tasks.add_metric([status], count)
        jobs = CounterMetricFamily(
            "review_publish_jobs", "Publish jobs recorded, by outcome and trigger", labels=["status", "trigger"]
        )
        for labels, count in series("review_publish_jobs"):
            jobs.add_metric(labels, count)
        pending = (
            OutboxMessage.select()
            .where((OutboxMessage.status == "pending") & OutboxMessage.event_type.in_(sorted(self.sent_events)))
            .count()
            if self.sent_events
            else 0
        )
        outbox = GaugeMetricFamily(
            "review_webhook_outbox_pending", "Agent notifications waiting to be delivered", value=pending
        )
        feedback_counts = status_counts()  # kept by triggers: no scan of the table
        records = GaugeMetricFamily("feedback_records", "Feedback records by status", labels=["status"])
        for status in FEEDBACK_STATUSES:
            records.add_metric([status], feedback_counts[status])
        created = CounterMetricFamily("feedback_created", "Feedback records created, by channel", labels=["channel"])
        for channel, count in _grouped(Feedback.channel):
            created.add_metric([channel], count)
        yield from (tasks, jobs, outbox, records, created, *self._team())

    def _team(self) -> Iterator[Metric]:
        """The team's channels (docs/api.md §15, §16): what each still has to send, and every attempt's
        outcome for each message (counted at the event, so a failing mail server shows)."""
        pending = GaugeMetricFamily(
            "review_team_outbox_pending", "Team notifications still to send, by channel", labels=["channel"]
        )
        waiting = dict.fromkeys(self.team_channels, 0) | dict(_pending_by_channel(self.team_channels))
        for channel, count in waiting.items():
            pending.add_metric([channel], count)
        told = CounterMetricFamily(
            "review_team_notifications",
            "Team notifications by channel and each attempt's outcome: sent, failed (retried later), given_up",
            labels=["channel", "outcome"],
        )
        counts = {(channel, outcome): 0 for channel in self.team_channels for outcome in OUTCOMES}
        counts |= {(labels[0], labels[1]): count for labels, count in series(NOTIFICATIONS)}
        for labels, count in counts.items():
            told.add_metric(list(labels), count)
        yield from (pending, told)


class WorkerCollector:
    """Passes each background worker of this process has made: a worker that stopped passing is stuck."""

    def collect(self) -> Iterator[Metric]:
        passes = CounterMetricFamily(
            "review_worker_passes", "Passes of each background worker of this process", labels=["worker"]
        )
        for name, count in sorted(PASSES.items()):
            passes.add_metric([name], count)
        yield passes


class Metrics:
    def __init__(self, webhook_url: str, webhook_events: frozenset[str], team_channels: tuple[str, ...] = ()) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "http_requests", "HTTP requests answered", ["method", "route", "status"], registry=self.registry
        )
        self.durations = Histogram(
            "http_request_duration_seconds", "Time to answer, by route", ["route"], registry=self.registry
        )
        self.refused = Counter(
            "feedback_rejected", "Feedback submissions refused, by reason", ["reason"], registry=self.registry
        )
        for reason in FEEDBACK_REFUSALS.values():
            self.refused.labels(reason)  # present at 0, so alerts see a series from the start
        ProcessCollector(registry=self.registry)
        self.registry.register(WorkerCollector())  # process_resident_memory_bytes, process_open_fds, …
        self.registry.register(StoreCollector(webhook_events if webhook_url else frozenset(), team_channels))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request; `route` is its URL rule (never the raw path: ids would explode the series)."""
        self.requests.labels(method if method in METHODS else "other", route, str(status)).inc()
        self.durations.labels(route).observe(seconds)

    def feedback_answered(self, status: int) -> None:
        if status in FEEDBACK_REFUSALS:
            self.refused.labels(FEEDBACK_REFUSALS[status]).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
