"""The admin pages' language (CONTRACT §14): Flask-Babel with the gettext catalogues in translations/.

zh-CN (the default) and en, chosen by the review_lang cookie (the switch on every page), then
Accept-Language, then REVIEW_DEFAULT_LANGUAGE. Each catalogue's compiled .mo file is committed beside
its .po (tests/test_i18n.py checks that they agree), so a fresh `pip install -e .` serves both
languages with no build step. The JSON API never asks: it keeps codes and English messages.
"""
from pathlib import Path

from flask import current_app, g, request
from flask_babel import Babel, ngettext

from blueprints.common import settings
from rules.vocabulary import PAGE_LANGUAGES

COOKIE = "review_lang"
COOKIE_SECONDS = 365 * 24 * 3600
TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"
LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}  # page language -> Babel's locale name (translations/<name>/)


def _from_accept_language():
    """The first of the browser's languages (by preference) that the pages speak: any zh is zh-CN."""
    for value, _quality in request.accept_languages:
        primary = value.lower().replace("_", "-").split("-")[0]
        if primary == "zh":
            return "zh-CN"
        if primary == "en":
            return "en"
    return None


def language():
    """"zh-CN" or "en" for this request; once per request."""
    if "page_language" not in g:
        cookie = request.cookies.get(COOKIE)
        g.page_language = (cookie if cookie in PAGE_LANGUAGES else None) or _from_accept_language() \
            or settings().default_language
    return g.page_language


def _locale():
    return LOCALES[language()]


def duration_words(seconds):
    """86400 -> "24 hours" / "24 小时" (the sign-in page's wait)."""
    if seconds % 3600 == 0:
        return ngettext("%(num)d hour", "%(num)d hours", seconds // 3600)
    if seconds % 60 == 0:
        return ngettext("%(num)d minute", "%(num)d minutes", seconds // 60)
    return ngettext("%(num)d second", "%(num)d seconds", seconds)


def login_wait():
    return duration_words(settings().login_failure_window_seconds)


def _vary(response):
    """A page's words depend on the cookie and Accept-Language: caches must keep them apart."""
    if response.mimetype == "text/html":
        response.vary.update(("Cookie", "Accept-Language"))
    return response


def set_language_cookie(response, value):
    response.set_cookie(COOKIE, value, max_age=COOKIE_SECONDS, path="/", samesite="Lax", httponly=True,
                        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")))


def init_app(app):
    Babel(app, locale_selector=_locale, default_locale=LOCALES["zh-CN"],
          default_translation_directories=str(TRANSLATIONS))
    app.after_request(_vary)
