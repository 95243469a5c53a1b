"""`flask --app app fetch-stats --date YYYY-MM-DD [--account CODE]`: fetch a day's figures of the live
articles now, e.g. the days the service was down, up to the platform's yesterday (docs/api.md §19). It
prints the database it works on (run from another folder, it is another instance) and what it stored."""

import re
from datetime import date

import click

from models import db
from services.stats import fetch_day
from services.stats.fetching import accounts_with_live, platform_yesterday


def register(app, where):
    settings = app.extensions["settings"]

    @app.cli.command("fetch-stats")
    @click.option("--date", "day", required=True, help="the day to fetch, YYYY-MM-DD")
    @click.option("--account", help="one account's code (default: every account with an article live then)")
    def fetch_stats(day, account):
        """Fetch one day's reader figures from the platform (again: a refetch replaces, never adds)."""
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):  # fromisoformat takes 20261125 and 2026-W48-3 too
                raise ValueError(day)
            date.fromisoformat(day)
        except ValueError:
            raise click.BadParameter(f"{day!r} is not a date like 2026-11-25", param_hint="--date") from None
        last = platform_yesterday()
        if day > last:  # the platform answers 61501 for it: asked of nobody (docs/api.md §19)
            raise click.BadParameter(
                f"{day} has no figures yet: the platform gives them up to its yesterday, {last} (Beijing time)",
                param_hint="--date",
            )
        if account is not None and account not in settings.accounts:
            raise click.BadParameter(
                f"{account!r} is not one of {', '.join(settings.accounts)}", param_hint="--account"
            )
        failed = False
        click.echo(f"database: {where(app)}")
        with db.connection_context():
            chosen = [account] if account else accounts_with_live(settings, day)
            if not chosen:
                click.echo(f"{day}: no account had an article live within {settings.stats_days} days; nothing fetched")
            for code in chosen:
                result = fetch_day(code, day, settings, force=True)
                if result is None:
                    click.echo(f"{code} {day}: another process is fetching it now; try again in a minute")
                elif result["error"]:
                    failed = True
                    click.echo(f"{code} {day}: not fetched: {result['error']}")
                else:
                    click.echo(f"{code} {day}: stored {result['stored']} day rows of live articles")
        if failed:
            raise SystemExit(1)
