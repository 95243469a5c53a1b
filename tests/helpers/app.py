"""The app under test, for test modules and fixtures alike: its tokens, building it (and a restart),
admins signing in, and the error shape every JSON error has. Fixtures are in tests/conftest.py."""

from contextlib import contextmanager

from models import db
from services.auth import save_admin
from services.settings import Settings

AGENT_TOKEN = "agent-token-for-tests-0123456789"
ADMIN_PASSWORD = "correct horse battery"


def reload_settings(app):
    """Settings are read once at start; a test that changes app.config afterwards plays a restart."""
    app.extensions["settings"] = Settings.from_config(app.config)


@contextmanager
def built_app(make_app, **overrides):
    """make_app(**overrides), closing this thread's database connection afterwards."""
    try:
        yield make_app(**overrides)
    finally:
        if db.obj is not None and not db.is_closed():  # None: the app refused its settings before binding one
            db.close()


def create_admin(username="admin", password=ADMIN_PASSWORD, permissions="review,feedback"):
    with db.connection_context():
        return save_admin(username, password, permissions)


def login(client, username="admin", password=ADMIN_PASSWORD):
    response = client.post("/api/auth/login", data={"username": username, "password": password})
    assert response.status_code == 303, response.data
    assert "error=" not in response.headers["Location"], response.headers["Location"]
    return response


def signed_in_admin(app):
    """A test client of `app` signed in as a new admin holding both permissions."""
    create_admin()
    test_client = app.test_client()
    login(test_client)
    return test_client


def assert_error(response, status, code):
    """The error shape (docs/api.md §2) with the expected status and code."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    body = response.get_json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body["error"]
