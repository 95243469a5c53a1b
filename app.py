"""Application factory; `python app.py` serves with waitress (docs/api.md §1)."""

import argparse
import logging
import os
import secrets
import sys
import tempfile
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask, session
from flask.json.provider import DefaultJSONProvider
from flask_babel import Babel
from flask_login import LoginManager
from werkzeug.middleware.proxy_fix import ProxyFix

import serving
from blueprints import (
    agent,
    assets,
    auth,
    chat,
    comments,
    editions,
    errors,
    feedback,
    hooks,
    i18n,
    metrics,
    openapi,
    package,
    pages,
    publishing,
    review,
    system,
    wechat,
)
from cli import register_commands
from cli.demo import build_demo_app
from models import db, init_database
from models.schema import SchemaTooNew, upgrade
from models.users import admin_by_pk
from models.writes import checkpoint_wal
from rules import accounts
from rules.client_input import load_json
from rules.labels import LOCALES, TRANSLATIONS
from services import logs
from services.auth import EndedSessions, ensure_admin, has_active_admin, use_hash_method
from services.background import POLICY, Scheduler, job
from services.chat import clients as chat_clients
from services.chat.worker import chat_job
from services.comments.fetching import comments_job
from services.editions.sending import edition_job
from services.export.package import sweep_stale
from services.feedback.indexing import indexer
from services.files import sweep_pending
from services.live import live_job
from services.operations import service_lock
from services.operations.backup import sweep_stopped_backups
from services.operations.restore_journal import finish_restore, resume_restore
from services.publishing.jobs import release_orphaned_claims
from services.review.webhooks import sender_job
from services.settings import DEFAULTS, Settings, SettingsError, configured_accounts, from_environment, parse
from services.stats.fetching import stats_job
from services.task_delete import recover_deletions
from services.team import sender

log = logging.getLogger("review")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
UPLOAD_SCOPES = ("review", "library", "feedback")


class JSONProvider(DefaultJSONProvider):
    """Request bodies are read by the service's one strict JSON rule: what it refuses is a 400, not a 500."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return load_json(s)


def _state_path(config, name):
    """Absolute folder; relative values (and the defaults) are taken from the working directory."""
    value = (config or {}).get(name) or os.environ.get(name) or DEFAULTS[name]
    return Path(value).resolve()


def _secret_key(instance):
    """Generated once into the instance folder (0600) and reused. Written whole or not at all (an empty file
    fails every sign-in); the first of two processes starting at once wins and both use its key."""
    path = instance / "secret_key"
    key = path.read_text().strip() if path.exists() else ""
    if key:
        os.chmod(path, 0o600)
        return key
    fd, temp = tempfile.mkstemp(prefix=".secret_key.", dir=instance)  # created 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():  # empty: from a start that failed before this fix
            os.replace(temp, path)
        else:
            try:
                os.link(temp, path)
            except FileExistsError:
                pass  # another process wrote it first
    finally:
        Path(temp).unlink(missing_ok=True)
    return path.read_text().strip()


def load_settings(app, config):
    """defaults -> instance/config.py -> environment -> `config` argument, then checked and typed once (a bad
    value stops the start naming it): services get `app.extensions["settings"]`, app.config the typed values."""
    app.config.from_mapping(DEFAULTS)
    app.config.from_pyfile("config.py", silent=True)
    # Each configured account's own settings are known names too (docs/api.md §18).
    app.config.update(from_environment(os.environ, configured_accounts(config or {}, os.environ, app.config)))
    app.config.update(config or {})
    app.config["REVIEW_INSTANCE_PATH"] = app.instance_path
    app.config["REVIEW_UPLOADS_PATH"] = str(_state_path(app.config, "REVIEW_UPLOADS_PATH"))
    values = parse(app.config)
    app.config.update({name: value for name, value in values.items() if isinstance(value, (bool, int, float))})
    app.extensions["settings"] = Settings.from_values(values)
    app.config.update(
        SESSION_COOKIE_NAME="review_admin_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_PATH="/",
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=app.config["PERMANENT_SESSION_LIFETIME"]),
        REMEMBER_COOKIE_NAME="review_admin_remember",
        MAX_CONTENT_LENGTH=app.config.get("MAX_CONTENT_LENGTH") or 32 * 1024 * 1024,
    )


def _private_folder(folder):
    """Created 0700 (docs/api.md §11): the state folders hold password hashes, tokens and uploads."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)


def _private_files(database):
    """review.db (and a -wal/-shm or config.py already there) readable by the owner only (0600)."""
    os.close(os.open(database, os.O_CREAT | os.O_RDWR, 0o600))
    for path in (database.with_name(name) for name in ("review.db", "review.db-wal", "review.db-shm", "config.py")):
        if path.exists():
            os.chmod(path, 0o600)


def _init_storage(app, serve):
    uploads = Path(app.config["REVIEW_UPLOADS_PATH"])
    for folder in (uploads, *(uploads / scope for scope in UPLOAD_SCOPES)):
        _private_folder(folder)
    database = Path(app.instance_path) / "review.db"
    if not app.config["DATABASE_URL"]:
        _private_files(database)  # SQLite gives its -wal and -shm the database file's mode
    init_database(app.config["DATABASE_URL"] or None, str(database))
    upgrade()

    with db.connection_context():
        # Recovery is the serving start's: a command run beside the service (perhaps in another
        # container) must not settle the service's uploads, deletions, packages or publishes in flight.
        if serve:
            sweep_pending(uploads)
            recover_deletions(uploads)
            sweep_stale(app.extensions["settings"].temp_path, at_start=True)  # ZIPs a crash left
            sweep_stopped_backups(app.extensions["settings"])  # database copies a killed backup left
            release_orphaned_claims(app.extensions["settings"].team)  # a failure the team hears of


def _bootstrap_admin(app):
    """At a serving start (not in one-off commands): the admin named by the settings."""
    username, password = app.config["REVIEW_ADMIN_USERNAME"], app.config["REVIEW_ADMIN_PASSWORD"]
    if username and password:
        with db.connection_context():
            user, changed = ensure_admin(username, password, "review,feedback")
        if changed:
            log.info("admin account %s created or updated from settings", username)
        elif not user.active:
            log.warning(
                "admin account %s from settings is deactivated and stays so; change its password in "
                "the settings or run create-admin to turn it on again",
                username,
            )


def _init_login(app):
    manager = LoginManager(app)
    app.extensions["ended_sessions"] = ended = EndedSessions()
    with db.connection_context():
        ended.sweep()

    @manager.user_loader
    def load_user(user_key):
        if session.get("sid") in ended:  # signed out, though a copy of its cookie may still be sent
            session.clear()  # so this answer deletes the copy instead of signing it anew
            return None
        user_id, _, nonce = user_key.partition(":")
        user = admin_by_pk(int(user_id)) if user_id.isdigit() else None
        # Deactivated, deleted, or password changed since sign-in: the session ends now.
        return user if user and user.active and user.session_nonce == nonce else None


BLUEPRINTS = (
    errors,
    openapi,
    auth,
    system,
    metrics,
    assets,
    agent,
    review,
    publishing,
    package,
    feedback,
    pages,
    wechat,
    editions,
    chat,
    comments,
)


def _register_blueprints(app):
    api = openapi.Document(app)  # flask-smorest's blueprints are documented when the document is first read
    for module in BLUEPRINTS:
        (api if isinstance(module.bp, openapi.Blueprint) else app).register_blueprint(module.bp)
        if hasattr(module, "init_app"):
            module.init_app(app)


# Every kind of background work (its switch, looks, lease and attempts: services.background.POLICY), and the
# jobs it makes for the process's scheduler.
JOBS = (
    ("webhook-sender", lambda s: [sender_job(s)]),  # the agent's outbox (docs/api.md §4)
    ("team", lambda s: sender.jobs(s)),  # the team's robots and e-mail, a job per channel
    # Keeps the WAL short from outside the requests (models.writes.checkpoint_wal).
    ("wal-checkpointer", lambda _s: [job("wal-checkpointer", lambda _until: checkpoint_wal())]),
    ("feedback-indexer", lambda _s: [indexer()]),
    ("live-worker", lambda s: [live_job(s)]),  # going live, and its result (docs/api.md §18)
    ("stats", lambda s: [stats_job(s)]),  # what readers did, daily (docs/api.md §19)
    ("comments", lambda s: [comments_job(s)]),  # readers' comments (docs/api.md §23)
    ("edition", lambda s: [edition_job(s)]),  # editions sent to followers (docs/api.md §21)
    # Decision cards in the team's chat (docs/api.md §22), when an app is set.
    ("chat-cards", lambda s: [chat_job(s)] if s.team.chat.platforms else []),
)


def _start_scheduler(app):
    """Every enabled job of this app, each on its own thread (app.extensions["scheduler"])."""
    settings = app.extensions["settings"]
    jobs = [each for kind, make in JOBS if app.config[POLICY[kind].switch] for each in make(settings)]
    if jobs:
        app.extensions["scheduler"] = scheduler = Scheduler(jobs)
        scheduler.start()


def create_app(config=None, *, serve=None, hold=None):
    """Build the app: settings, state folders, database (created/upgraded), auth, blueprints. `serve`, `hold`
    and their defaults: docs/api.md §1; a one-off command never settles what the service has in flight."""
    if serve is None:
        serve = config is None and os.environ.get("FLASK_RUN_FROM_CLI") != "true"
    if hold is None:
        hold = serve and config is None
    if serve and not logging.getLogger().handlers:  # `waitress-serve --call app:create_app` logs as `python app.py`
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    logs.guard(logging.getLogger())  # request data cannot start a log line of its own
    instance = _state_path(config, "REVIEW_INSTANCE_PATH")
    held = service_lock.hold(instance) if hold else None  # first: waits while a restore runs
    resumed = resume_restore(instance)  # a restore killed midway: finished or undone before config.py is read
    _private_folder(instance)
    app = Flask(__name__, instance_path=str(instance), instance_relative_config=True)
    app.json = JSONProvider(app)
    load_settings(app, config)
    app.config["SECRET_KEY"] = (config or {}).get("SECRET_KEY") or _secret_key(instance)
    # The readers' pseudonyms are keyed by it (docs/api.md §23).
    app.extensions["settings"] = replace(app.extensions["settings"], secret_key=app.config["SECRET_KEY"])
    accounts.use(app.extensions["settings"].accounts)  # this thread's commands; requests set their own
    chat_clients.forget_tokens()
    use_hash_method(app.extensions["settings"].hash_method)
    if held:  # on PostgreSQL, before the database is written
        app.extensions["service_lock"] = held.share_database(app.extensions["settings"].database_url)
    app.extensions["made_at_start"] = finish_restore(resumed, app.extensions["settings"], one_off=not serve)
    app.json.ensure_ascii = False
    app.json.sort_keys = False
    if app.config["TRUSTED_PROXIES"]:
        # The client's address as the outermost proxy saw it, and the scheme the edge proxy set (one
        # value: inner proxies pass it on). The Host header stays the proxy's to set (nginx: $host);
        # X-Forwarded-Host is not believed, as a proxy that leaves it alone passes the client's own.
        # Flask's documented way to wrap its WSGI app; its stubs type wsgi_app as a plain method.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=app.config["TRUSTED_PROXIES"], x_proto=1)  # type: ignore[method-assign]
    _init_storage(app, serve)
    _init_login(app)
    # The pages' words and times (docs/api.md §14): the catalogue in translations/, the page's language and
    # the viewer's zone per request; {% trans %} blocks trimmed, as babel.cfg extracts them.
    Babel(
        app,
        locale_selector=i18n.locale,
        timezone_selector=i18n.viewer_zone,
        default_locale=LOCALES["zh-CN"],
        default_translation_directories=str(TRANSLATIONS),
    )
    app.jinja_env.policies["ext.i18n.trimmed"] = True
    hooks.init_app(app)
    _register_blueprints(app)
    register_commands(app)
    if serve:
        _bootstrap_admin(app)
        _start_scheduler(app)
        if not app.config["REVIEW_AGENT_TOKEN"]:  # one-off commands make no agent calls
            log.warning("REVIEW_AGENT_TOKEN is not set: every agent call will be refused with 401")
    return app


def serving_app():
    """The factory for other WSGI servers: `waitress-serve --call app:serving_app`."""
    return create_app(serve=True, hold=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python app.py", description="Serve the review service with waitress.")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="offline demo: a fake WeChat platform, a demo admin and sample data in a temporary folder",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    logs.guard(logging.getLogger())
    try:
        if args.demo:
            app, banner = build_demo_app(create_app)
            print("\n".join(banner), flush=True)
        else:
            app = create_app(serve=True, hold=True)
    except (SettingsError, SchemaTooNew) as exc:
        raise SystemExit(f"error: {exc}") from None
    with db.connection_context():  # a new instance: nobody can sign in until an admin is created
        if not has_active_admin():
            log.warning("no admin account can sign in yet: run `flask --app app create-admin NAME` from this folder")
    serving.serve(app)


if __name__ == "__main__":
    main(sys.argv[1:])
