"""Fixtures: an app on a temporary database and uploads folder, clients, signed-in helpers.

A module marked `pytestmark = pytest.mark.both_stores` runs every test that takes the `store` fixture
(through `app`, `make_app`, `database_url`) twice, on SQLite and on PostgreSQL (a throwaway cluster,
tests/helpers/postgres.py): every rule it checks holds on both stores."""

import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import pytest

from app import create_app
from fakeplatform import FakePlatform
from fakeplatform.chatapps import FakeChatApps
from models import db
from models.base import stop_background
from tests.helpers import response_check
from tests.helpers.app import AGENT_TOKEN, built_app, create_admin, login, signed_in_admin
from tests.helpers.feedback import UNLIMITED
from tests.helpers.postgres import Cluster, binaries
from tests.helpers.publishing import ACCOUNTS, platform_settings
from tests.helpers.receivers import WebhookReceiver
from tests.helpers.review import article_payload, create_task, image_post_payload, make_asset
from tests.helpers.routing import shared_routes

STORES = ("sqlite", "postgresql")
# Passwords hashed cheaply under test (docs/api.md §1 PASSWORD_HASH_METHOD): scrypt is most of a test's setup.
# The environment carries it to the service processes tests start too.
os.environ.setdefault("PASSWORD_HASH_METHOD", "pbkdf2:sha256:1")
# The service processes tests start (hundreds) reuse compiled modules instead of compiling every one.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_generate_tests(metafunc):
    if "store" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_stores"):
        metafunc.parametrize("store", STORES, indirect=True)


@pytest.fixture
def store(request):
    """ "sqlite" or "postgresql": the store the test's app runs on (SQLite unless marked both_stores)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def postgres_cluster():
    if binaries() is None:
        reason = "PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    folder = Path(tempfile.mkdtemp(prefix="review-pg-"))  # not under pytest's root-only folders
    cluster = Cluster(folder).start()
    yield cluster
    cluster.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def database_url(store, request):
    """DATABASE_URL of the test's store: "" (SQLite in the instance folder) or an empty PostgreSQL database."""
    if store == "sqlite":
        yield ""
        return
    cluster = request.getfixturevalue("postgres_cluster")
    yield cluster.url(cluster.emptied("store_tests"))  # one database, emptied for each test
    if db.obj is not None:  # None when the app never started (a test of a refused setting)
        stop_background()
        if hasattr(db.obj, "close_all"):
            db.obj.close_all()
        if not db.is_closed():
            db.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory):
    """A SQLite database at the latest schema, made once per worker: a test's new instance starts
    from a copy (creating every table and index is otherwise most of what building an app costs)."""
    folder = tmp_path_factory.mktemp("template")
    paths = {"REVIEW_INSTANCE_PATH": str(folder / "instance"), "REVIEW_UPLOADS_PATH": str(folder / "uploads")}
    create_app({"TESTING": True, "DATABASE_URL": "", **paths})
    db.obj.close_all()
    template = folder / "instance" / "review.db"
    with closing(sqlite3.connect(template)) as connection:  # the copy is the file alone: nothing left in a WAL
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return template


@pytest.fixture
def make_app(tmp_path, database_url, sqlite_template):
    """Factory so a test can build the app twice on the same folders (restarts)."""

    def factory(**overrides):
        instance = Path(overrides.get("REVIEW_INSTANCE_PATH", tmp_path / "instance"))
        if not (overrides.get("DATABASE_URL", database_url) or (instance / "review.db").exists()):
            instance.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copyfile(sqlite_template, instance / "review.db")
        config = {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
            "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
            "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
            "FEEDBACK_CLIENT_TOKENS": "web=client-web-token,miniprogram=client-mini-token",
            "FEEDBACK_ANONYMOUS_CHANNELS": "miniprogram",
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "FEEDBACK_INDEXER_ENABLED": False,  # tests index with indexing.drain() where it matters
            "WAL_CHECKPOINTER_ENABLED": False,
            "WECHAT_LIVE_WORKER_ENABLED": False,  # tests of going live turn it on (tests/live/)
            "WECHAT_EDITIONS_ENABLED": False,  # tests of editions turn it on (tests/editions/)
            "WECHAT_STATS_ENABLED": False,  # tests of readers' figures turn it on (tests/stats/)
            "WECHAT_COMMENTS_ENABLED": False,  # readers' comments are fetched when a test says (tests/comments/)
            # The pages' checks read English; tests of the Chinese pages ask for zh-CN (docs/api.md §14).
            "REVIEW_DEFAULT_LANGUAGE": "en",
        }
        config.update(overrides)
        with shared_routes():  # the worker's URL map, bound once (tests/helpers/routing.py)
            application = create_app(config, serve=True)
        response_check.install(application)
        return application

    yield factory
    stop_background()  # the test's workers end with it (not on a store a later fixture has dropped)


@pytest.fixture(autouse=True)
def answers_match_the_document():
    """Fails a test whose requests got an answer the OpenAPI document does not describe."""
    response_check.PROBLEMS.clear()
    yield
    problems = sorted(set(response_check.PROBLEMS), key=str)
    response_check.PROBLEMS.clear()
    assert problems == [], "answers unlike the OpenAPI document"


@pytest.fixture
def app(make_app):
    with built_app(make_app) as application:
        yield application


@pytest.fixture
def fake():
    """The fake WeChat platform (fakeplatform/) running on 127.0.0.1, knowing both test accounts."""
    platform = FakePlatform(dict(ACCOUNTS.values()))
    platform.start()
    yield platform
    platform.stop()


@pytest.fixture
def receiver():
    """The agent's webhook receiver: a real HTTP server on 127.0.0.1 keeping what it gets."""
    hook = WebhookReceiver()
    yield hook
    hook.stop()


@pytest.fixture
def platform_app(make_app, fake):
    """The service pointed at the fake platform, with credentials of both accounts (tests/publishing/
    takes it as its `app`)."""
    with built_app(make_app, **platform_settings(fake)) as application:
        yield application


@pytest.fixture
def feedback_app(make_app):
    """The app without rate limits (tests that create many records), admin 'admin' created."""
    with built_app(make_app, **UNLIMITED) as application:
        create_admin()
        yield application


@pytest.fixture
def fb_client(feedback_app):
    return feedback_app.test_client()


@pytest.fixture
def fb_admin(feedback_app):
    test_client = feedback_app.test_client()
    login(test_client)
    return test_client


@pytest.fixture
def article(app, client, agent_headers):
    """A pending article task and its cover asset."""
    cover = make_asset(app, 900, 500)
    return create_task(client, agent_headers, article_payload([cover["url"]])), cover


@pytest.fixture
def post(app, client, agent_headers):
    """A pending image post task and its three images."""
    images = [make_asset(app, 600, 800) for _ in range(3)]
    return create_task(client, agent_headers, image_post_payload(images)), images


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def admin_client(app):
    return signed_in_admin(app)


@pytest.fixture
def agent_headers():
    return {"x-review-agent-token": AGENT_TOKEN}


@pytest.fixture
def chat_apps():
    """The chat platforms' fake apps (Feishu, WeCom) on 127.0.0.1 (fakeplatform/chatapps.py)."""
    apps = FakeChatApps()
    apps.start()
    yield apps
    apps.stop()
