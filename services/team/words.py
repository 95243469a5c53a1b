"""The team's words come from the pages' gettext catalogue (translations/, docs/api.md §20: one term per
meaning across pages, robots and e-mail), worded in the language of REVIEW_DEFAULT_LANGUAGE.

A message is worded on a sender's thread, outside any request or app context, where Flask-Babel has
no locale: `speaking(language)` gives it one (`force_locale`) in the context of a Flask app that only
holds the catalogue. The labels repeat blueprints/page_words.py's message ids (a service cannot import
a view); tests/agent/test_team_words.py checks that each robot word is the page's.
"""
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Flask
from flask_babel import Babel, force_locale
from flask_babel import lazy_gettext as _l
from flask_babel import lazy_pgettext as _p

TRANSLATIONS = Path(__file__).resolve().parents[2] / "translations"
LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}  # REVIEW_DEFAULT_LANGUAGE -> Babel's name (blueprints/i18n.py)

FEEDBACK_TYPE_LABELS = {"bug": _l("Bug"), "suggestion": _l("Suggestion"), "content": _p("feedback type", "Content"),
                        "account": _p("feedback type: the app user's account", "Account"), "other": _l("Other")}
# Where the task stands after the event, in the words the pages use for it.
PENDING_REVIEW = _l("Pending review")  # a status (STATUS_LABELS)
PUBLISH_FAILED = _l("Publish failed")  # a timeline event (EVENT_LABELS)
LIVE = _l("Live")  # going live (LIVE_LABELS)
LIVE_FAILED = _l("Going live failed")

_CATALOGUE = Flask(__name__)
Babel(_CATALOGUE, default_translation_directories=str(TRANSLATIONS))


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Within it, gettext and the labels above answer in `language` ("zh-CN" unless "en")."""
    with _CATALOGUE.app_context(), force_locale(LOCALES.get(language, LOCALES["zh-CN"])):
        yield
