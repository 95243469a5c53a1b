"""The templates' names for the label tables of rules/labels.py (docs/api.md §14: codes appear as words
of the page's language): STATUS_LABELS, EVENT_DATA_VALUES and the rest, by their own names."""

from flask_babel import lazy_pgettext as _p

from rules import labels

# Where an edition stands (docs/api.md §21), on /editions.
EDITION_STATUS_LABELS = {
    "draft": _p("edition status", "Draft"),
    "scheduled": _p("edition status", "Scheduled"),
    "sending": _p("edition status", "Sending"),
    "sent": _p("edition status", "Sent"),
    "failed": _p("edition status", "Failed"),
    "canceled": _p("edition status", "Canceled"),
}

LABELS = {
    **{name: table for name, table in vars(labels).items() if name.endswith(("_LABELS", "_VALUES", "_HIDDEN"))},
    "EDITION_STATUS_LABELS": EDITION_STATUS_LABELS,
}
