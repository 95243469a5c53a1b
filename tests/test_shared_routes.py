"""The apps make_app builds route on one URL map per worker (tests/helpers/routing.py): bound by the first,
found complete by the next; a map an app added routes to is not handed to another."""

from flask import Blueprint


def endpoints(app):
    return {rule.endpoint for rule in app.url_map.iter_rules()}


def test_the_apps_of_a_worker_share_one_url_map(make_app):
    first, second = make_app(), make_app()
    assert second.url_map is first.url_map
    assert len(endpoints(second)) > 50 and endpoints(second) <= set(second.view_functions)
    with second.test_request_context():  # its builders work for the app that found them bound
        assert second.url_for("system.healthz") == "/healthz"


def test_routes_one_app_adds_stay_out_of_the_next(make_app):
    first = make_app()
    probe = Blueprint("probe_shared", __name__)
    probe.add_url_rule("/probe-shared", "here", lambda: "here")
    first.register_blueprint(probe)
    assert "probe_shared.here" in endpoints(first)
    second = make_app()
    assert second.url_map is not first.url_map
    assert "probe_shared.here" not in endpoints(second)
    assert make_app().url_map is second.url_map  # shared again from there
