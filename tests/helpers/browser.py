"""What the browser tests share besides their fixtures (tests/browser/conftest.py): Chromium's place and
flags, the served app's handle, console error collection, signing in, screenshots, axe-core and the
sideways-scroll measure."""

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from werkzeug.serving import WSGIRequestHandler

from cli.demo import DEMO_ADMIN, platform_settings, push_events_to, start_fake_platform
from fakeplatform.threaded import Served
from models import db
from services.auth import save_admin
from tests.helpers.app import ADMIN_PASSWORD

CHROMIUM = Path("/usr/bin/chromium")
OUTPUT = Path(__file__).resolve().parents[1] / "output"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


@dataclass
class LiveServer:
    url: str
    app: object
    platform: object
    uploads: str


@dataclass
class ConsoleErrors:
    """Console errors and uncaught exceptions of one page; expected ones are allowed by pattern."""

    messages: list = field(default_factory=list)
    allowed: list = field(default_factory=list)

    def attach(self, page):
        page.on(
            "console",
            lambda message: (
                message.type == "error" and self.messages.append(f"{message.text} [{message.location.get('url', '')}]")
            ),
        )
        page.on("pageerror", lambda error: self.messages.append(f"uncaught: {error}"))

    def allow(self, pattern):
        """An error the test provokes on purpose (the browser logs every 4xx answer to fetch)."""
        self.allowed.append(re.compile(pattern))

    def unexpected(self):
        return [m for m in self.messages if not any(p.search(m) for p in self.allowed)]

    def assert_clean(self):
        assert self.unexpected() == [], self.unexpected()


def sign_in(page, next_path="/review", username=DEMO_ADMIN, password=ADMIN_PASSWORD):
    """Sign in through the login form the way a person does."""
    page.goto(next_path)
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(next_path.split("?")[0]) + r"(\?.*)?$"))


def screenshot(page, name):
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{name}.png"), full_page=True)


def task_by_topic(demo, topic):
    return next(task for task in demo["tasks"] if task["topic"] == topic)


def stored_task(task_id):
    from services import review

    with db.connection_context():
        return review.get_task(task_id)


# ---- the reviewer's workspace (docs/api.md §14): both languages, a wide screen and a phone ----
SIZES = {"wide": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
SIGN_IN_WORDS = {"zh-CN": ("用户名", "密码", "登录"), "en": ("User name", "Password", "Sign in")}
AXE = Path(__file__).resolve().parents[1] / "browser" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def sign_in_as(page, language, next_path="/review"):
    """The login form in the page's language."""
    user, password, button = SIGN_IN_WORDS[language]
    page.goto(next_path)
    page.get_by_label(user).fill(DEMO_ADMIN)
    page.get_by_label(password).fill(ADMIN_PASSWORD)
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_url(re.compile(re.escape(next_path.split("?")[0]) + r"(\?.*)?$"))


def axe_violations(page, impacts=("critical", "serious")):
    """axe-core's violations of the WCAG 2.0/2.1/2.2 A and AA rules on the page, as "rule: target" lines.

    axe-core comes from npm (.ci/run installs it into tests/browser/node_modules); without it the test is
    skipped with the reason, unless CI is set: then it fails."""
    if not AXE.exists():
        reason = (
            f"axe-core is not installed at {AXE} (npm install --prefix tests/browser axe-core@4.11.4; .ci/run does it)"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    page.wait_for_load_state("load")  # a page that has just reloaded may still be parsing
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(AXE.read_text())  # through the DevTools protocol: the page's CSP allows no inline script
    # The rendered articles (the body options' drafts and the live preview) carry the publish theme's own
    # colours, as WeChat will show them: their contrast is the theme's, not the page's. Every other rule
    # checks them too; the page's own text is checked for contrast everywhere else.
    results = page.evaluate(
        """async (tags) => {
        const only = {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']};
        const all = await axe.run(document, {...only, rules: {'color-contrast': {enabled: false}}});
        const contrast = await axe.run({include: [document], exclude: [['.rendered'], ['.wx-body']]},
                                       {...only, runOnly: {type: 'rule', values: ['color-contrast']}});
        return [...all.violations, ...contrast.violations];
    }""",
        AXE_TAGS,
    )
    return [
        f"{v['id']} ({v['impact']}): {node['target']} {node.get('failureSummary', '')[:200]}"
        for v in results
        if v["impact"] in impacts
        for node in v["nodes"]
    ]


def sideways_overflow(page):
    """How many CSS px the page is wider than the window (0: no sideways scrolling)."""
    page.wait_for_load_state("load")  # a page that has just reloaded may still lack its stylesheets
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


@contextmanager
def serve_with_workers(make_app, **settings):
    """The app with its workers (going live, editions) on a real server, the fake platform pushing its events
    to it and the demo admin signed up; a LiveServer."""
    fake, base_url = start_fake_platform()
    fake.publish_seconds = 0.2
    app = make_app(
        **platform_settings(base_url),
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="1,1,2,4",
        **settings,
    )
    served = Served(app, handler=QuietHandler)
    url = served.url
    push_events_to(fake, url)
    with db.connection_context():
        save_admin(DEMO_ADMIN, ADMIN_PASSWORD, "review,feedback")
    try:
        yield LiveServer(url, app, fake, app.config["REVIEW_UPLOADS_PATH"])
    finally:
        served.stop()
        fake.stop()
