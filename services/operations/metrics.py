"""Prometheus metrics (CONTRACT §11) through prometheus-client: requests by URL rule, and the store's state.

Counters of this process (requests, durations, refused feedback) live in one registry per app; the
store's numbers (tasks, jobs, outbox, feedback) are read from the database at each scrape, so they
are the same whichever process answers and survive restarts.
"""
from collections.abc import Iterator

import peewee
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from models import Feedback, OutboxMessage, PublishJob, ReviewTask
from rules.vocabulary import FEEDBACK_STATUSES, STATUSES
from services.feedback.queries import status_counts

# Why the feedback route refused a submission, by the status it answered.
FEEDBACK_REFUSALS = {429: "rate_limited", 409: "duplicate", 413: "too_large", 400: "invalid"}


def _grouped(*columns: peewee.Field) -> Iterator[tuple]:
    query = columns[0].model.select(*columns, peewee.fn.COUNT(peewee.SQL("*"))).group_by(*columns)
    return query.tuples().iterator()


class StoreCollector:
    """Numbers read from the store at scrape time (the caller holds a database connection)."""

    def collect(self) -> Iterator[Metric]:
        tasks = GaugeMetricFamily("review_tasks", "Review tasks by status", labels=["status"])
        counts = dict.fromkeys(STATUSES, 0) | dict(_grouped(ReviewTask.status))
        for status, count in counts.items():
            tasks.add_metric([status], count)
        jobs = CounterMetricFamily("review_publish_jobs", "Publish jobs recorded, by outcome and trigger",
                                   labels=["status", "trigger"])
        for status, trigger, count in _grouped(PublishJob.status, PublishJob.trigger_mode):
            jobs.add_metric([status, trigger], count)
        pending = OutboxMessage.select().where(OutboxMessage.status == "pending").count()
        outbox = GaugeMetricFamily("review_webhook_outbox_pending", "Agent notifications waiting to be delivered",
                                   value=pending)
        feedback_counts = status_counts()  # kept by triggers: no scan of the table
        records = GaugeMetricFamily("feedback_records", "Feedback records by status", labels=["status"])
        for status in FEEDBACK_STATUSES:
            records.add_metric([status], feedback_counts[status])
        created = CounterMetricFamily("feedback_created", "Feedback records created, by channel", labels=["channel"])
        for channel, count in _grouped(Feedback.channel):
            created.add_metric([channel], count)
        yield from (tasks, jobs, outbox, records, created)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("http_requests", "HTTP requests answered", ["method", "route", "status"],
                                registry=self.registry)
        self.durations = Histogram("http_request_duration_seconds", "Time to answer, by route", ["route"],
                                   registry=self.registry)
        self.refused = Counter("feedback_rejected", "Feedback submissions refused, by reason", ["reason"],
                               registry=self.registry)
        for reason in FEEDBACK_REFUSALS.values():
            self.refused.labels(reason)  # present at 0, so alerts see a series from the start
        self.registry.register(StoreCollector())

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request; `route` is its URL rule (never the raw path: ids would explode the series)."""
        self.requests.labels(method, route, str(status)).inc()
        self.durations.labels(route).observe(seconds)

    def feedback_answered(self, status: int) -> None:
        if status in FEEDBACK_REFUSALS:
            self.refused.labels(FEEDBACK_REFUSALS[status]).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
