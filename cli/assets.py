"""`flask --app app assets import PATH…` and `flask --app app assets sync ACCOUNT` (docs/api.md §6)."""

import functools
import os
from pathlib import Path

import click

from models import db
from rules.limits import MAX_UPLOAD_BYTES, mib
from services import assets as asset_service
from services.errors import ServiceError
from services.platform.client import PlatformError, client_for


def _files_under(path):
    """A file itself, or every file below a folder (sorted, hidden entries skipped)."""
    if not path.is_dir():
        yield path
        return
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(folder) / name


def _import_one(path, uploads_root):
    """('added' | 'exists', asset) or ('refused', reason)."""
    try:
        if not path.is_file():
            return "refused", "no such file" if not path.exists() else "not a regular file"
        if path.stat().st_size > MAX_UPLOAD_BYTES:
            return "refused", f"larger than {mib(MAX_UPLOAD_BYTES)}"
        data = path.read_bytes()
    except OSError as exc:
        return "refused", exc.strerror or type(exc).__name__
    try:
        asset, created = asset_service.save_upload(
            data, scope="library", file_name=path.name, uploads_root=uploads_root
        )
    except ServiceError as err:
        return "refused", err.message
    return ("added" if created else "exists"), asset


def _describe(path, outcome, result):
    if outcome == "refused":
        return f"refused {path}: {result}"
    if outcome == "added":
        size = f"{result.width}x{result.height}"
        return f"added   {path} -> {result.asset_id} {result.url} ({size} {result.content_type})"
    return f"exists  {path} -> {result.asset_id} {result.url} (same image already in the library)"


def register(app):
    @app.cli.group("assets")
    def assets_group():
        """Fill the shared material library."""

    @assets_group.command("import")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
    def import_command(paths):
        """Add image files, or every file in folders, to the library (same checks as an upload).

        Exits with status 1 when any file was refused.
        """
        counts = {"added": 0, "exists": 0, "refused": 0}
        uploads_root = app.extensions["settings"].uploads_path
        with db.connection_context():
            for given in paths:
                for path in _files_under(given):
                    outcome, result = _import_one(path, uploads_root)
                    counts[outcome] += 1
                    click.echo(_describe(path, outcome, result))
        click.echo(f"{counts['added']} added, {counts['exists']} already in the library, {counts['refused']} refused")
        if counts["refused"]:
            raise SystemExit(1)

    @assets_group.command("sync")
    @click.argument("account")
    def sync_command(account):
        """Keep the account's platform image materials as remote library assets (media_id reused)."""
        report = asset_service.SyncReport()
        settings = app.extensions["settings"]
        if account not in settings.accounts:  # WECHAT_ACCOUNTS decides (docs/api.md §18)
            raise click.BadParameter(f"{account!r} is not one of {', '.join(settings.accounts)}", param_hint="ACCOUNT")
        try:
            client = client_for(account, settings)
            measure = functools.partial(
                asset_service.remote_size,
                allowed_hosts=settings.remote_image_hosts,
                allow_private=settings.remote_image_allow_private,
            )
            with db.connection_context():
                asset_service.sync_platform_images(client, account, report, measure)
        except PlatformError as err:
            raise click.ClickException(f"sync of {account} stopped: {err} ({_summary(report)} before that)") from None
        click.echo(f"{account}: {_summary(report)}")


def _summary(report):
    text = f"{report.added} added, {report.updated} updated, {report.unchanged} unchanged"
    text += f", {report.skipped} skipped" if report.skipped else ""
    if report.unmeasured:  # such an image cannot be an article cover (its ratio is checked)
        text += (
            f", {report.unmeasured} whose size could not be read (check REVIEW_REMOTE_IMAGE_HOSTS; "
            "they cannot be covers until a later sync reads it)"
        )
    return text
