"""Rate limits of feedback intake and the order of the checks (docs/api.md §9).

Time is the limiter's clock, set by the test (no sleeping).
"""

import pytest

from models import db
from models.feedback import Feedback, FeedbackAttachment
from services.feedback.ratelimit import limiter_from_settings
from services.ratelimit import SlidingWindowLimiter
from services.settings import Settings
from services.settings.values import parse_limits
from tests.helpers.app import assert_error
from tests.helpers.feedback import UNLIMITED, WEB, payload, submit

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def limited(make_app):
    """factory(**limits) -> (client, clock)."""

    def factory(**limits):
        app = make_app(**{**UNLIMITED, "FEEDBACK_MAX_BODY_BYTES": 2048, **limits})
        clock = Clock()
        app.extensions["feedback_limiter"].clock = clock
        return app.test_client(), clock

    return factory


def test_parse_limits():
    assert parse_limits("20/minute;200/day") == ((20, 60), (200, 86400))
    assert parse_limits(" 5 per second ; 3/2 hours ") == ((5, 1), (3, 7200))
    assert parse_limits("") == ()
    for bad in ("20", "x/minute", "0/minute", "20/fortnight"):
        with pytest.raises(ValueError):
            parse_limits(bad)


def test_a_bad_setting_stops_the_start_naming_it(make_app):
    with pytest.raises(ValueError, match="FEEDBACK_RATE_LIMIT_PER_DEVICE"):
        make_app(FEEDBACK_RATE_LIMIT_PER_DEVICE="ten a minute")


def test_defaults_from_the_contract(app):
    limiter = app.extensions["feedback_limiter"]
    assert limiter.rules == {
        "ip": [(20, 60), (200, 86400)],
        "device": [(10, 60), (100, 86400)],
        "version": [(600, 60)],
        "channel": [(1200, 60)],
    }


@pytest.fixture
def stored(app):
    """The limiter's hits live in the test app's database."""
    with db.connection_context():
        yield


def test_sliding_window_and_retry_after(stored):
    clock = Clock()
    limiter = SlidingWindowLimiter({"ip": [(2, 60), (3, 3600)]}, clock=clock)
    assert limiter.hit({"ip": "a"}) is None  # t=1000
    clock.now += 10
    assert limiter.hit({"ip": "a"}) is None  # t=1010
    clock.now += 20
    assert limiter.hit({"ip": "a"}) == 30  # the t=1000 hit leaves the minute at t=1060
    assert limiter.hit({"ip": "b"}) is None  # other keys are independent
    clock.now = 1060.2
    assert limiter.hit({"ip": "a"}) is None  # the hour now holds 3
    clock.now = 1075
    assert limiter.hit({"ip": "a"}) == 3600 - 75  # the hour limit: first hit leaves at t=4600
    clock.now = 4600.5
    assert limiter.hit({"ip": "a"}) is None


def test_refused_requests_are_not_recorded_and_no_key_is_charged_alone(stored):
    clock = Clock()
    limiter = SlidingWindowLimiter({"ip": [(1, 60)], "device": [(5, 60)]}, clock=clock)
    assert limiter.hit({"ip": "a", "device": "d"}) is None
    assert limiter.hit({"ip": "a", "device": "d"}) == 60
    assert limiter.hit({"ip": "b", "device": "d"}) is None  # the refused hit did not count for d
    for _ in range(3):
        assert limiter.hit({"ip": None, "device": "d"}) is None
    assert limiter.hit({"ip": None, "device": "d"}) == 60


def test_idle_keys_are_forgotten(stored):
    clock = Clock()
    limiter = SlidingWindowLimiter({"ip": [(5, 60)]}, clock=clock)
    for n in range(999):
        limiter.hit({"ip": f"10.0.{n // 250}.{n % 250}"})
    assert limiter.tracked_keys() == 999
    clock.now += 61
    limiter.hit({"ip": "fresh"})  # the 1000th hit sweeps
    assert limiter.tracked_keys() == 1


def test_apps_on_one_database_count_together(make_app):
    """Several service processes on one database: the limit holds for them all (it lived in each
    process's memory, so N processes let N times the limit through)."""
    first = make_app(FEEDBACK_RATE_LIMIT_PER_IP="1/minute")
    second = make_app(FEEDBACK_RATE_LIMIT_PER_IP="1/minute")
    assert first.extensions["feedback_limiter"] is not second.extensions["feedback_limiter"]
    assert submit(first.test_client()).status_code == 201
    assert_error(submit(second.test_client()), 429, "rate_limited")


def test_per_ip_limit_with_whole_second_retry_after(limited):
    client, clock = limited(FEEDBACK_RATE_LIMIT_PER_IP="2/minute")
    assert submit(client, ip="10.0.0.1").status_code == 201
    clock.now += 0.4
    assert submit(client, ip="10.0.0.1").status_code == 201
    clock.now += 0.4
    response = submit(client, ip="10.0.0.1")
    error = assert_error(response, 429, "rate_limited")
    assert response.headers["Retry-After"] == "60"  # 59.2 s rounded up to whole seconds
    assert error["details"]["retryAfter"] == 60
    assert submit(client, ip="10.0.0.2").status_code == 201
    clock.now += 59.3
    assert submit(client, ip="10.0.0.1").status_code == 201


def test_per_device_limit_across_addresses(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_DEVICE="2/minute")
    for n in range(2):
        assert submit(client, payload(deviceId="dev-1"), ip=f"10.0.1.{n}").status_code == 201
    assert_error(submit(client, payload(deviceId="dev-1"), ip="10.0.1.9"), 429, "rate_limited")
    assert submit(client, payload(deviceId="dev-2"), ip="10.0.1.9").status_code == 201


def test_per_version_limit_counts_app_name_and_version_together(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_VERSION="2/hour")
    for n in range(2):
        assert submit(client, payload(appVersion="3.0.0"), ip=f"10.0.2.{n}").status_code == 201
    response = submit(client, payload(appVersion="3.0.0"), ip="10.0.2.9")
    assert_error(response, 429, "rate_limited")
    assert response.headers["Retry-After"] == "3600"
    assert submit(client, payload(appVersion="3.0.1"), ip="10.0.2.9").status_code == 201
    assert submit(client, payload(appVersion="3.0.0", appName="other"), ip="10.0.2.9").status_code == 201


def test_per_channel_limit(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_CHANNEL="3/minute")
    for n in range(3):
        assert submit(client, ip=f"10.0.3.{n}").status_code == 201
    assert_error(submit(client, ip="10.0.3.9"), 429, "rate_limited")
    mini = {"x-feedback-client-token": "client-mini-token"}
    assert submit(client, payload(), headers=mini, ip="10.0.3.9").status_code == 201


def test_every_authenticated_request_counts_but_unauthenticated_ones_do_not(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_IP="3/minute")
    for _ in range(5):
        assert_error(submit(client, headers={}), 401, "unauthorized")
    assert_error(submit(client, payload(type="nope")), 400, "validation_error")
    body = payload()
    assert submit(client, body).status_code == 201
    assert_error(submit(client, body), 409, "duplicate_feedback")
    assert_error(submit(client), 429, "rate_limited")


def test_oversized_bodies_count_but_stay_413(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_IP="2/minute")
    for _ in range(2):
        assert_error(submit(client, payload(content="x" * 3000)), 413, "payload_too_large")
    assert_error(submit(client), 429, "rate_limited")


def test_check_order_size_before_limit_before_validation(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_DEVICE="1/minute")
    assert submit(client, payload(deviceId="dev-x")).status_code == 201
    # Over its limit: an oversized body is still 413 ...
    assert_error(submit(client, payload(deviceId="dev-x", content="x" * 3000)), 413, "payload_too_large")
    # ... an invalid body is 429 (the device key is read leniently from the unvalidated body) ...
    assert_error(submit(client, payload(deviceId="dev-x", type="nope", surprise=True)), 429, "rate_limited")
    # ... and so is a duplicate of the first one.
    assert_error(submit(client, payload(deviceId="dev-x")), 429, "rate_limited")
    # The token still comes first.
    assert_error(submit(client, payload(deviceId="dev-x"), headers={}), 401, "unauthorized")


def test_body_that_is_not_json_is_limited_by_ip_and_channel(limited):
    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_IP="1/minute")
    response = client.post(
        "/api/feedbacks",
        data=b"garbage",
        headers={**WEB, "Content-Type": "application/json"},
        environ_base={"REMOTE_ADDR": "10.0.4.1"},
    )
    assert_error(response, 400, "validation_error")
    assert_error(submit(client, ip="10.0.4.1"), 429, "rate_limited")


def test_limiter_from_settings_skips_empty_categories(stored):
    limits = {
        "FEEDBACK_RATE_LIMIT_PER_IP": "1/minute",
        "FEEDBACK_RATE_LIMIT_PER_DEVICE": "",
        "FEEDBACK_RATE_LIMIT_PER_VERSION": "",
        "FEEDBACK_RATE_LIMIT_PER_CHANNEL": "",
    }
    limiter = limiter_from_settings(Settings.with_defaults(limits))
    assert limiter.rules == {"ip": [(1, 60)]}
    assert limiter.hit({"ip": "a", "device": "d"}) is None


def test_attachment_uploads_count_by_address_and_channel_not_by_device(limited):
    """Uploads are the costly requests: they used to be unlimited (docs/api.md §9: every authenticated
    request counts). A feedback's attachments do not use up its device's submissions."""
    import io

    from tests.helpers.feedback import image_bytes

    client, _clock = limited(FEEDBACK_RATE_LIMIT_PER_IP="3/minute", FEEDBACK_RATE_LIMIT_PER_DEVICE="1/minute")
    record = submit(client, payload(deviceId="dev-1"), ip="10.0.2.1").get_json()

    def attach(ip):
        return client.post(
            f"/api/feedbacks/{record['id']}/attachments",
            headers=WEB,
            data={"file": (io.BytesIO(image_bytes()), "s.png"), "kind": "screenshot"},
            content_type="multipart/form-data",
            environ_base={"REMOTE_ADDR": ip},
        )

    assert [attach("10.0.2.1").status_code for _ in range(2)] == [201, 201]
    response = attach("10.0.2.1")
    assert_error(response, 429, "rate_limited")
    assert response.headers["Retry-After"]
    assert attach("10.0.2.2").status_code == 201  # another address
    with db.connection_context():  # the refused upload stored nothing
        assert FeedbackAttachment.select().join(Feedback).where(Feedback.feedback_id == record["id"]).count() == 3


def test_large_images_are_decoded_one_at_a_time(monkeypatch):
    """Eight 40-megapixel screenshots decoded at once took the process to 1.3 GB."""
    import services.images.checks
    from services.assets import check_image
    from services.feedback.checks import check_screenshot
    from tests.helpers.feedback import image_bytes

    taken = []

    class Recording:
        def __enter__(self):
            taken.append(True)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(services.images.checks, "_LARGE_DECODE", Recording())
    check_screenshot(image_bytes(size=(40, 30)))
    check_image(image_bytes(size=(40, 30)))
    assert taken == []
    check_screenshot(image_bytes(size=(2100, 2000)))  # re-encoded: decoded whole, one at a time
    assert taken == [True]
    check_image(image_bytes(size=(2100, 2000)))  # an upload's PNG is measured, never decoded (docs/api.md §6)
    assert taken == [True]
