"""`flask --app app migrate-to DATABASE_URL`: move this instance's rows to PostgreSQL (README)."""
import click

from services.operations.migrate import TargetNotEmpty, migrate_to
from services.settings import SettingsError


def register(app):
    @app.cli.command("migrate-to")
    @click.argument("database_url")
    def migrate_command(database_url):
        """Copy every row of this instance's database into the empty database at DATABASE_URL (stop the
        service first); then start the service with DATABASE_URL set. The uploads folders stay where they are."""
        try:
            copied = migrate_to(database_url)
        except (SettingsError, TargetNotEmpty) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"copied {sum(copied.values())} rows: {copied.get('review_task', 0)} tasks, "
                   f"{copied.get('feedback', 0)} feedback records, {copied.get('asset', 0)} assets; every table's "
                   "count checked. Start the service with DATABASE_URL set to the new database.")
