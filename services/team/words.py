"""The team's words come from the pages' gettext catalogue (docs/api.md §14, §15: one term per meaning
across pages, robots and e-mail). A message is worded on a sender's thread, where Flask-Babel has no
locale: `speaking(language)` gives it one, in the context of a Flask app that only holds the catalogue.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from flask_babel import Babel, force_locale

from rules.labels import EVENT_LABELS, LIVE_LABELS, LOCALES, STATUS_LABELS, TRANSLATIONS

# Where the task stands after the event, in the words the pages use for it.
PENDING_REVIEW = STATUS_LABELS["pending_review"]
PUBLISH_FAILED = EVENT_LABELS["publish_failed"]  # a timeline event
LIVE = LIVE_LABELS["live"]  # going live
LIVE_FAILED = LIVE_LABELS["failed"]

_CATALOGUE = Flask(__name__)
Babel(_CATALOGUE, default_translation_directories=str(TRANSLATIONS))


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Within it, gettext and the labels answer in `language` ("zh-CN" unless "en")."""
    with _CATALOGUE.app_context(), force_locale(LOCALES.get(language, LOCALES["zh-CN"])):
        yield
