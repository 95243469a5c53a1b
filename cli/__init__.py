"""`flask --app app ...` commands."""

import sys
from pathlib import Path

import click

from cli import assets, backup, comments, copy_to, dataset, demo, stats
from models import AdminUser, db
from services.auth import save_admin, set_active
from services.chat.linking import link_chat
from services.errors import ServiceError


def _where(app):
    """The database a command wrote to: run from another folder, it is another instance."""
    if app.config["DATABASE_URL"]:
        return "the DATABASE_URL database"
    return str(Path(app.instance_path) / "review.db")


def register_commands(app):
    @app.cli.command("create-admin")
    @click.argument("username")
    @click.option(
        "--permissions",
        help="review, feedback or both (review,feedback): the default for a new "
        "account; an existing account keeps its own unless this is given",
    )
    @click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
    def create_admin(username, permissions, password_stdin):
        """Create an admin account, or set its password (and permissions); turns a deactivated one on again."""
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
        try:
            with db.connection_context():
                if permissions is None:
                    existing = AdminUser.get_or_none(AdminUser.username == username)
                    permissions = existing.permissions if existing else "review,feedback"
                user = save_admin(username, password, permissions)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(f"admin {user.username} saved with permissions {user.permissions} in {_where(app)}")

    @app.cli.command("deactivate-admin")
    @click.argument("username")
    def deactivate_admin(username):
        """Deactivate an admin; their sessions stop working at once."""
        with db.connection_context():
            if not set_active(username, False):
                raise click.ClickException(f"no admin named {username}")
        click.echo(f"admin {username} deactivated in {_where(app)}")

    @app.cli.command("link-chat")
    @click.argument("username")
    @click.option("--feishu", "feishu", metavar="OPEN_ID", help="their open_id in the Feishu app")
    @click.option("--wecom", "wecom", metavar="USERID", help="their userid in WeCom")
    @click.option("--unlink", is_flag=True, help="remove the identities named (both when none is named)")
    def link_chat_command(username, feishu, wecom, unlink):
        """Link an admin to their chat identities: their clicks on decision cards decide (docs/api.md §22)."""
        try:
            with db.connection_context():
                user = link_chat(username, feishu, wecom, unlink)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(
            f"admin {user.username}: feishu {user.feishu_open_id or '-'}, wecom {user.wecom_userid or '-'} "
            f"in {_where(app)}"
        )

    # Each area adds its module here with register(app).
    for module in (assets, demo, backup, copy_to):
        module.register(app)
    stats.register(app, _where)  # it says which database it works on, as the admin commands do
    dataset.register(app, _where)  # it says which database it read, as the admin commands do
    comments.register(app, _where)  # it says which database it wrote to, as the admin commands do
