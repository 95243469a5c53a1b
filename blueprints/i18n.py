"""The admin pages' language (docs/api.md §14): Flask-Babel with the gettext catalogues in translations/.

zh-CN (the default) and en, chosen by the review_lang cookie (the switch on every page), then
Accept-Language, then REVIEW_DEFAULT_LANGUAGE. Each catalogue's compiled .mo file is committed beside
its .po (tests/test_i18n.py checks that they agree), so a fresh `pip install -e .` serves both
languages with no build step. The JSON API never asks: it keeps codes and English messages.
"""
from datetime import date, datetime, time, timedelta
from pathlib import Path
from urllib.parse import unquote

from flask import current_app, g, request
from flask_babel import Babel, ngettext

from blueprints.common import settings
from rules.vocabulary import PAGE_LANGUAGES
from services.setting_values import time_zone

COOKIE = "review_lang"
COOKIE_SECONDS = 365 * 24 * 3600
ZONE_COOKIE = "review_tz"  # the browser's time zone, set by static/words.js: the list filters' days are its days
TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"
LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}  # page language -> Babel's locale name (translations/<name>/)


def _from_accept_language():
    """docs/api.md §14: any zh the browser accepts is zh-CN; else en when it accepts English; else None.
    A language given q=0 is one the browser refuses."""
    accepted = {value.lower().replace("_", "-").split("-")[0] for value, quality in request.accept_languages
                if quality > 0}
    if "zh" in accepted:
        return "zh-CN"
    return "en" if "en" in accepted else None


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


def local_time(value):
    """A stored UTC time as REVIEW_TIME_ZONE's YYYY-MM-DD HH:MM (the page script then shows the browser's zone)."""
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment.astimezone(settings().time_zone).strftime("%Y-%m-%d %H:%M")


def viewer_days(args):
    """`from`/`to` dates of a list filter as date-times bounding those days in the viewer's zone
    (docs/api.md §14); anything else is left for the list's own checks to judge."""
    named = unquote(request.cookies.get(ZONE_COOKIE, ""))  # words.js writes it URI-encoded
    zone = (time_zone(named) if named else None) or settings().time_zone
    out = dict(args)
    for name, end in (("from", False), ("to", True)):
        try:
            day = date.fromisoformat(args.get(name, ""))
            if end:  # a date-time `to` covers its millisecond: the last one of the day
                moment = datetime.combine(day + timedelta(days=1), time(), zone) - timedelta(milliseconds=1)
            else:
                moment = datetime.combine(day, time(), zone)
        except (ValueError, OverflowError):  # 9999-12-31 has no next day: the list refuses it (§20)
            continue
        out[name] = moment.isoformat(timespec="milliseconds")
    return out


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
