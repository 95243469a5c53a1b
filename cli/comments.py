"""`flask --app app fetch-comments [--account CODE]`: fetch the readers' comments of the live articles now
(docs/api.md §23), whether due or not; an article another process is fetching is left to it. It prints the
database it works on and what it stored."""

import click

from models import db
from services.comments.fetching import fetch


def register(app, where):
    settings = app.extensions["settings"]

    @app.cli.command("fetch-comments")
    @click.option("--account", help="one account's code (default: every account)")
    def fetch_comments(account):
        """Fetch the readers' comments of articles live within WECHAT_COMMENTS_DAYS."""
        if account is not None and account not in settings.accounts:
            raise click.BadParameter(
                f"{account!r} is not one of {', '.join(settings.accounts)}", param_hint="--account"
            )
        click.echo(f"database: {where(app)}")
        with db.connection_context():
            summary = fetch(settings, account, force=True)
        click.echo(f"{summary['articles']} articles fetched, {summary['stored']} new comments stored")
        for failure in summary["failed"]:
            click.echo(f"{failure['account']}: not fetched: {failure['error']}")
        if summary["failed"]:
            raise SystemExit(1)
