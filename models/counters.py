"""Monotonic event counters for /metrics (docs/api.md §16), kept in the store so every process on it
counts together, restarts keep them, and deleting the rows they counted never lowers them."""

import peewee

from models.base import BaseModel


class EventCounter(BaseModel):
    """One counter series: `name` with its label values joined as `labels` (e.g. "failed,manual")."""

    id = peewee.AutoField()
    name = peewee.CharField(max_length=64)
    labels = peewee.CharField(max_length=200)
    value = peewee.BigIntegerField(default=0)

    class Meta:
        indexes = ((("name", "labels"), True),)


def count_event(name: str, *labels: str, by: int = 1) -> None:
    """Add `by` (one) to a series; call inside the transaction of the event it counts."""
    (
        EventCounter.insert(name=name, labels=",".join(labels), value=by)
        .on_conflict(
            conflict_target=[EventCounter.name, EventCounter.labels],
            update={EventCounter.value: EventCounter.value + by},
        )
        .execute()
    )


def series(name: str) -> list[tuple[list[str], int]]:
    """Every series of one counter: ([label values], value)."""
    rows = EventCounter.select(EventCounter.labels, EventCounter.value).where(EventCounter.name == name)
    return [(row.labels.split(","), row.value) for row in rows]
