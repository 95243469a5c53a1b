"""`flask --app app export-dataset --format raw|sft|dpo|trl-dpo|kto [--from --to --account] [--output FILE]`:
the lines of GET /api/review/dataset (docs/api.md §20), to a file or standard output; what it wrote goes to stderr."""

import click

from models import db
from rules.vocabulary import DATASET_FORMATS
from services.errors import ValidationFailed
from services.export.dataset import dataset_lines, dataset_query


def register(app, where):
    settings = app.extensions["settings"]

    @app.cli.command("export-dataset")
    @click.option(
        "--format",
        "format_",
        required=True,
        type=click.Choice(DATASET_FORMATS),
        help="raw (every decided task), sft, dpo, trl-dpo or kto",
    )
    @click.option("--from", "from_", help="decisions on or after this date (2026-11-01) or moment, UTC")
    @click.option("--to", help="decisions up to this date (the whole day) or moment, UTC")
    @click.option("--account", help="one account's code (default: every account)")
    @click.option("--output", type=click.Path(dir_okay=False, writable=True), help="a file (default: standard output)")
    def export_dataset(format_, from_, to, account, output):
        """Write the editors' decisions and the readers' response as JSON Lines, oldest decision first."""
        if account is not None and account not in settings.accounts:
            raise click.BadParameter(
                f"{account!r} is not one of {', '.join(settings.accounts)}", param_hint="--account"
            )
        try:
            query = dataset_query(format_, from_, to, account)
        except ValidationFailed as err:
            name = next(iter(err.details), "from")
            raise click.BadParameter(err.message, param_hint=f"--{name}") from None
        count = 0
        with db.connection_context(), click.open_file(output or "-", "w", encoding="utf-8") as out:
            for line in dataset_lines(query):
                out.write(line)
                count += 1
        click.echo(f"{count} {format_} lines written to {output or 'standard output'} from {where(app)}", err=True)
