"""The templates' names for the label tables of rules/labels.py (docs/api.md §14: codes appear as words
of the page's language): STATUS_LABELS, EVENT_DATA_VALUES and the rest, by their own names."""
from rules import labels

LABELS = {name: table for name, table in vars(labels).items() if name.endswith(("_LABELS", "_VALUES"))}
