"""Times on the pages (docs/api.md §14): one zone per request, Flask-Babel's, for the times the server
writes and the days of the lists' date filters: the viewer's (the review_tz cookie static/words.js
keeps), else REVIEW_TIME_ZONE."""

import re
from datetime import datetime
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest

from models import db


@pytest.fixture
def demo_data(app, admin_client):
    from services.demo import seed

    with db.connection_context():
        return seed(app.extensions["settings"], "admin")


def written_times(admin_client, path="/review?status=all"):
    """(UTC value, the server's text) of each <time> of the page."""
    stamps = re.findall(r'<time datetime="([^"]+)">([^<]+)</time>', admin_client.get(path).get_data(as_text=True))
    assert stamps, path
    return stamps


def local(value, zone):
    return f"{datetime.fromisoformat(value.replace('Z', '+00:00')).astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M}"


@pytest.mark.parametrize("zone", ["America/New_York", "Pacific/Kiritimati"])
def test_the_server_writes_the_viewers_zone_once_the_browser_told_it(admin_client, demo_data, zone):
    admin_client.set_cookie("review_tz", quote(zone, safe=""))  # as words.js writes it
    assert all(text == local(value, zone) for value, text in written_times(admin_client))
    task = demo_data["tasks"][0]
    assert all(text == local(value, zone) for value, text in written_times(admin_client, f"/review/{task['id']}"))


@pytest.mark.parametrize("cookie", [None, "Asia", "A" * 300, "zone.tab", "Mars/Olympus"])
def test_without_a_zone_the_server_writes_the_teams(admin_client, demo_data, cookie):
    if cookie:
        admin_client.set_cookie("review_tz", cookie)
    assert all(text == local(value, "Asia/Shanghai") for value, text in written_times(admin_client))


def test_a_filter_day_over_a_clock_change_is_the_viewers_whole_day(admin_client):
    """New York's clocks go forward on 2026-03-08: the day starts at -05:00 and ends at -04:00."""
    admin_client.set_cookie("review_tz", quote("America/New_York", safe=""))
    page = admin_client.get("/feedback?from=2026-03-08&to=2026-03-08").get_data(as_text=True)
    assert quote("2026-03-08T00:00:00.000-05:00", safe="") in page
    assert quote("2026-03-08T23:59:59.999-04:00", safe="") in page
