"""Behind a reverse proxy (TRUSTED_PROXIES): limits and sign-in throttles count the client's own
address, and an https page's writes pass the same-origin check. Without the setting the forwarded
headers are ignored, so a client cannot pick the address it is counted under."""

from tests.helpers.app import ADMIN_PASSWORD, assert_error, create_admin
from tests.helpers.feedback import UNLIMITED, WEB, submit

PROXY = "10.9.9.9"  # the proxy's own address, the same for every request it passes on


def forwarded(client_ip, proto="http"):
    return {**WEB, "X-Forwarded-For": client_ip, "X-Forwarded-Proto": proto}


def test_feedback_limits_count_the_forwarded_address_only_behind_trusted_proxies(make_app):
    limits = {**UNLIMITED, "FEEDBACK_RATE_LIMIT_PER_IP": "2/minute"}
    trusting = make_app(**limits, TRUSTED_PROXIES=1).test_client()
    for n in range(3):  # three clients, two posts each: nobody is over 2/minute
        for _ in range(2):
            assert submit(trusting, headers=forwarded(f"203.0.113.{n}"), ip=PROXY).status_code == 201
    assert_error(submit(trusting, headers=forwarded("203.0.113.0"), ip=PROXY), 429, "rate_limited")

    plain = make_app(**limits).test_client()  # default 0: the header is the client's word only
    for n in range(2):
        assert submit(plain, headers=forwarded(f"198.51.100.{n}"), ip=PROXY).status_code == 201
    assert_error(submit(plain, headers=forwarded("198.51.100.7"), ip=PROXY), 429, "rate_limited")


def test_sign_in_throttle_counts_the_forwarded_address(make_app):
    client = make_app(TRUSTED_PROXIES=1, LOGIN_MAX_FAILURES=2).test_client()
    create_admin()

    def sign_in(client_ip, password):
        return client.post(
            "/api/auth/login",
            data={"username": "admin", "password": password},
            headers={"X-Forwarded-For": client_ip},
            environ_base={"REMOTE_ADDR": PROXY},
        )

    for _ in range(2):
        assert sign_in("203.0.113.66", "wrong").headers["Location"] == "/login?error=invalid_credentials"
    assert sign_in("203.0.113.66", "wrong").headers["Location"] == "/login?error=too_many_attempts"
    # The same user name is throttled too (docs/api.md §3), so another address signs in as another admin.
    create_admin("other")
    answer = client.post(
        "/api/auth/login",
        data={"username": "other", "password": ADMIN_PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.5"},
        environ_base={"REMOTE_ADDR": PROXY},
    )
    assert answer.headers["Location"] == "/review"


def test_an_https_page_behind_the_proxy_may_change_state(make_app):
    def delete_from_https_page(app):
        client = app.test_client()
        create_admin()
        headers = {"X-Forwarded-Proto": "https", "Host": "review.example"}  # nginx: Host $host
        signed_in = client.post(
            "/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD}, headers=headers
        )
        assert "error=" not in signed_in.headers["Location"]
        return client.delete("/api/review/tasks/unknown-task", headers={**headers, "Origin": "https://review.example"})

    assert_error(delete_from_https_page(make_app(TRUSTED_PROXIES=1)), 404, "not_found")  # past the origin check
    assert_error(delete_from_https_page(make_app()), 403, "forbidden")


def test_two_proxies_count_the_outermost_address_and_no_forwarded_host_is_believed(make_app):
    """With TRUSTED_PROXIES=2 the edge proxy alone sets X-Forwarded-Proto; X-Forwarded-Host, which a
    proxy may pass through from the client, never decides the origin a write is checked against."""
    app = make_app(TRUSTED_PROXIES=2)
    create_admin()
    client = app.test_client()
    edge = {"X-Forwarded-Proto": "https", "Host": "review.example"}
    client.post("/api/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD}, headers=edge)
    write = client.delete(
        "/api/review/tasks/unknown-task",
        headers={**edge, "Origin": "https://review.example", "X-Forwarded-For": "203.0.113.9, 10.0.0.2"},
    )
    assert_error(write, 404, "not_found")
    spoofed = client.delete(
        "/api/review/tasks/unknown-task",
        headers={**edge, "X-Forwarded-Host": "evil.example", "Origin": "https://evil.example"},
    )
    assert_error(spoofed, 403, "forbidden")
