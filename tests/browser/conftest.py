"""Browser tests: the app served over real HTTP on 127.0.0.1 (werkzeug, threaded) next to a fake
WeChat platform, driven by Playwright in Debian's Chromium (/usr/bin/chromium, from .ci/run).

Without Chromium the tests are skipped with the reason, unless CI is set: then they fail.
Screenshots go to tests/output/ (gitignored); every page's console errors are collected and a
test fails on any it did not expect.
"""

import os

import pytest

from cli.demo import DEMO_ADMIN, platform_settings, start_fake_platform
from fakeplatform.threaded import Served
from models import db
from tests.helpers.app import ADMIN_PASSWORD
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, SIZES, ConsoleErrors, LiveServer, QuietHandler


@pytest.fixture(scope="module")  # per module: nothing of Playwright outlives the browser tests
def browser():
    if not CHROMIUM.exists():
        reason = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def live_server(make_app):
    """The app on a free port with both accounts pointed at a fresh fake platform."""
    fake, base_url = start_fake_platform()
    app = make_app(**platform_settings(base_url))
    served = Served(app, handler=QuietHandler)
    yield LiveServer(served.url, app, fake, app.config["REVIEW_UPLOADS_PATH"])
    served.stop()
    fake.stop()


@pytest.fixture
def demo(live_server):
    """The demo's sample data and admin `demo` (password ADMIN_PASSWORD); {"tasks", "feedback", "library"}."""
    from services.auth import save_admin
    from services.demo import seed

    with db.connection_context():
        save_admin(DEMO_ADMIN, ADMIN_PASSWORD, "review,feedback")
        return seed(live_server.app.extensions["settings"], DEMO_ADMIN)


@pytest.fixture
def console():
    return ConsoleErrors()


@pytest.fixture
def page(browser, live_server, console):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1360, "height": 900}, locale="en-US", accept_downloads=True
    )
    context.set_default_timeout(10_000)
    opened = context.new_page()
    console.attach(opened)
    yield opened
    context.close()


@pytest.fixture
def open_page(browser, live_server, console):
    """open_page(language, size, timezone=None): a page in its own context with the review_lang cookie set
    (as the language switch sets it), the viewport of `size` and, given, the browser's time zone."""
    contexts = []

    def make(language, size, timezone=None):
        options = {"timezone_id": timezone} if timezone else {}
        context = browser.new_context(
            base_url=live_server.url, viewport=SIZES[size], locale=language, has_touch=size == "phone", **options
        )
        context.set_default_timeout(10_000)
        context.add_cookies([{"name": "review_lang", "value": language, "url": live_server.url}])
        contexts.append(context)
        opened = context.new_page()
        console.attach(opened)
        return opened

    yield make
    for context in contexts:
        context.close()
