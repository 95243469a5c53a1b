"""`flask --app app backup PATH` and `flask --app app restore PATH [--force] [--config]` (docs/api.md §11, §16)."""

import sys

import click

from models import init_database
from models.backup_copy import close_store
from models.schema import upgrade
from services.operations.backup import create_backup
from services.operations.restore import RestoreRefused, remove_made, restore_backup


def _progress(verb):
    """A progress line on a terminal (stderr), nothing in a pipe or a cron mail."""
    if not sys.stderr.isatty():
        return None

    def show(done, total):
        click.echo(f"\r{verb}: {done}/{total} files" if total else f"\r{verb}: {done} files", nl=False, err=True)

    return show


def _counts(manifest):
    rows = manifest["counts"]["rows"]
    return (
        f"{rows.get('review_task', 0)} tasks, {rows.get('feedback', 0)} feedback records, "
        f"{rows.get('asset', 0)} assets, {manifest['counts']['files']} files"
    )


def register(app):
    settings = app.extensions["settings"]

    @app.cli.command("backup")
    @click.argument("path", type=click.Path(dir_okay=False, writable=True))
    def backup_command(path):
        """Write one .tar.gz of the database, secret key, config.py and uploaded files (safe while serving)."""
        manifest = create_backup(settings, path, _progress("backup"))
        if sys.stderr.isatty():
            click.echo(err=True)
        click.echo(f"backup written to {path}: {_counts(manifest)}")
        if manifest["missingFiles"]:
            click.echo(f"{len(manifest['missingFiles'])} files named by rows were gone and are not in it", err=True)

    @app.cli.command("restore")
    @click.argument("path", type=click.Path(dir_okay=False))
    @click.option("--force", is_flag=True, help="Replace an instance that already holds tasks, feedback or files.")
    @click.option(
        "--config",
        "with_config",
        is_flag=True,
        help="Restore the archive's config.py too (it is code the next command runs: trusted archives only).",
    )
    def restore_command(path, force, with_config):
        """Restore an archive of `backup` into this instance (stop the service first). Exit 2: nothing changed."""
        close_store()
        try:
            restored = restore_backup(settings, path, force, _progress("restore"), config=with_config)
        except RestoreRefused as exc:
            close_store()
            remove_made(app.extensions["made_at_start"])  # this command's start made them (docs/api.md §16)
            click.echo(f"restore refused: {exc}", err=True)
            sys.exit(2)
        finally:
            if sys.stderr.isatty():
                click.echo(err=True)
        init_database(settings.database_url or None, f"{settings.instance_path}/review.db")
        upgrade()  # an archive of an older version is upgraded as at start
        click.echo(f"restored {path}: {_counts(restored.manifest)}")
        if restored.config_left_out:
            click.echo(
                "the archive's config.py was left out: it is code the next command runs; "
                "restore with --config to bring it back from an archive you trust"
            )
