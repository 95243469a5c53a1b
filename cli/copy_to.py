"""`flask --app app copy-to DATABASE_URL`: copy this instance's rows into an empty database, e.g. PostgreSQL
(README). `migrate-to` is its old, hidden name."""

import click

from services.operations.copy_to import TargetNotEmpty, copy_to_database
from services.operations.service_lock import ServiceRunning, alone
from services.settings.values import SettingsError, check_database_url


def _copy(settings, database_url):
    try:
        check_database_url(database_url)
        # A service writing the instance would lose what it writes after the copy (docs/api.md §11).
        with alone(settings, database_url):
            copied = copy_to_database(database_url)
    except (SettingsError, TargetNotEmpty, ServiceRunning) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        f"copied {sum(copied.values())} rows: {copied.get('review_task', 0)} tasks, "
        f"{copied.get('feedback', 0)} feedback records, {copied.get('asset', 0)} assets; every table's "
        "count checked. Start the service with DATABASE_URL set to the new database."
    )


def register(app):
    settings = app.extensions["settings"]

    @app.cli.command("copy-to")
    @click.argument("database_url")
    def copy_to_command(database_url):
        """Copy every row of this instance's database into the empty database at DATABASE_URL (stop the
        service first); then start the service with DATABASE_URL set. The uploads folders stay where they are."""
        _copy(settings, database_url)

    @app.cli.command("migrate-to", hidden=True)
    @click.argument("database_url")
    def migrate_to_command(database_url):
        """Deprecated name of copy-to."""
        click.echo("migrate-to is deprecated: use `flask --app app copy-to DATABASE_URL`", err=True)
        _copy(settings, database_url)
