"""The admin pages' language and time zone (docs/api.md §14 "Languages", "Times"): Flask-Babel's two selectors,
which create_app hands to Babel, and what the pages build on them. The JSON API never asks."""

from datetime import date, datetime, time, timedelta
from urllib.parse import unquote
from zoneinfo import ZoneInfo

from flask import current_app, g, request
from flask_babel import format_datetime, get_timezone, ngettext
from werkzeug.wrappers import Response

from blueprints.common import settings
from rules.labels import LOCALES
from rules.vocabulary import PAGE_LANGUAGES
from services.settings.values import time_zone

COOKIE = "review_lang"
COOKIE_SECONDS = 365 * 24 * 3600
ZONE_COOKIE = "review_tz"  # the browser's time zone, set by static/words.js (URI-encoded)
TIME_FORMAT = "yyyy-MM-dd HH:mm"  # Babel's pattern for YYYY-MM-DD HH:MM, as static/words.js writes times


def _from_browser() -> str | None:
    """zh-CN or en as Accept-Language has it (docs/api.md §14); None when it accepts neither."""
    if request.accept_languages.best_match(["zh"]):
        return "zh-CN"
    return "en" if request.accept_languages.best_match(["en"]) else None


def language() -> str:
    """ "zh-CN" or "en" for this request, worked out once."""
    if "page_language" not in g:
        cookie = request.cookies.get(COOKIE)
        g.page_language = (
            (cookie if cookie in PAGE_LANGUAGES else None) or _from_browser() or settings().default_language
        )
    return g.page_language


def locale() -> str:
    """Flask-Babel's locale selector: the catalogue of this request's language."""
    return LOCALES[language()]


def viewer_zone() -> ZoneInfo:
    """Flask-Babel's timezone selector: review_tz's zone if it names one (docs/api.md §14), else REVIEW_TIME_ZONE.
    A ZoneInfo: Babel formats with it, and a filter day is combined with it (wall-clock days)."""
    named = unquote(request.cookies.get(ZONE_COOKIE, ""))
    return (time_zone(named) if named else None) or settings().time_zone


def duration_words(seconds: int) -> str:
    """86400 -> "24 hours" / "24 小时" (the sign-in page's wait)."""
    if seconds % 3600 == 0:
        return ngettext("%(num)d hour", "%(num)d hours", seconds // 3600)
    if seconds % 60 == 0:
        return ngettext("%(num)d minute", "%(num)d minutes", seconds // 60)
    return ngettext("%(num)d second", "%(num)d seconds", seconds)


def login_wait() -> str:
    return duration_words(settings().login_failure_window_seconds)


def local_time(value: str) -> str:
    """A stored UTC time as YYYY-MM-DD HH:MM in the viewer's zone (the page script then shows the browser's)."""
    return format_datetime(datetime.fromisoformat(str(value).replace("Z", "+00:00")), TIME_FORMAT)


def viewer_days(args: dict) -> dict:
    """`from`/`to` dates of a list filter as date-times bounding those days in the viewer's zone
    (docs/api.md §14); anything else is left for the list's own checks to judge."""
    zone = get_timezone()
    out = dict(args)
    for name, end in (("from", False), ("to", True)):
        try:
            day = date.fromisoformat(args.get(name, ""))
            if end:  # a date-time `to` covers its millisecond: the last one of the day
                moment = datetime.combine(day + timedelta(days=1), time(), zone) - timedelta(milliseconds=1)
            else:
                moment = datetime.combine(day, time(), zone)
        except (ValueError, OverflowError):  # 9999-12-31 has no next day: the list refuses it (§14)
            continue
        out[name] = moment.isoformat(timespec="milliseconds")
    return out


def vary_by_language(response: Response) -> Response:
    """A page's words and times depend on the cookies and Accept-Language: caches must keep them apart."""
    if response.mimetype == "text/html":
        response.vary.update(("Cookie", "Accept-Language"))
    return response


def set_language_cookie(response: Response, value: str) -> None:
    response.set_cookie(
        COOKIE,
        value,
        max_age=COOKIE_SECONDS,
        path="/",
        samesite="Lax",
        httponly=True,
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
    )
