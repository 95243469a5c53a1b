"""Hostile values a page or the start meets (docs/api.md §14): a time zone cookie naming a tzdata folder or
300 characters is ignored (the team's zone is used), REVIEW_TIME_ZONE naming a folder stops the start naming
the setting, and a filter date at the end of the calendar is the list's own error, never a 500."""

import re
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.helpers.app import create_admin, login

ROOT = Path(__file__).resolve().parents[2]
BAD_ZONES = ["Asia", "America/Argentina", "A" * 300, "Asia%2FShanghai%2F..%2F..", "zone.tab", "%00"]


@pytest.mark.parametrize("zone", BAD_ZONES)
@pytest.mark.parametrize("page", ["/review", "/feedback"])
def test_a_bad_time_zone_cookie_is_ignored(admin_client, page, zone):
    admin_client.set_cookie("review_tz", zone)
    response = admin_client.get(f"{page}?from=2026-02-01&to=2026-02-02")
    assert response.status_code == 200, response.status_code


def test_a_bad_time_zone_cookie_falls_back_to_the_teams_zone(admin_client):
    """The CSV link carries the bounds the list used: the team's zone (+08:00), as without a cookie."""

    def export_link(cookie):
        if cookie is None:
            admin_client.delete_cookie("review_tz")
        else:
            admin_client.set_cookie("review_tz", cookie)
        return admin_client.get("/feedback?from=2026-02-01").get_data(as_text=True)

    assert quote("2026-02-01T00:00:00.000+00:00", safe="") in export_link("Europe/London")  # the cookie is read
    team = quote("2026-02-01T00:00:00.000+08:00", safe="")
    assert team in export_link(None)
    for zone in BAD_ZONES:
        assert team in export_link(zone), zone


@pytest.mark.parametrize("value", ["9999-12-31", "0001-01-01"])
@pytest.mark.parametrize("name", ["from", "to"])
@pytest.mark.parametrize("zone", [None, "Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_a_filter_date_at_the_end_of_the_calendar_is_the_lists_error(admin_client, name, value, zone):
    if zone:
        admin_client.set_cookie("review_tz", zone)
    review = admin_client.get(f"/review?{name}={value}")
    assert review.status_code == 200, review.status_code
    assert f'id="err-{name}" data-error-for="{name}" >' in review.get_data(as_text=True)
    feedback = admin_client.get(f"/feedback?{name}={value}")
    assert feedback.status_code == 200, feedback.status_code
    assert f'id="err-{name}" data-error-for="{name}" >' in feedback.get_data(as_text=True)


def test_a_bad_filter_date_is_explained_in_the_pages_language(make_app):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    create_admin()
    login(client)
    response = client.get("/review?to=9999-12-31")
    assert response.status_code == 200, response.status_code
    html = response.get_data(as_text=True)
    assert '<html lang="zh-CN">' in html and re.search(r'id="err-to"[^>]*>请检查此项：', html)
