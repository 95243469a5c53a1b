"""Admin accounts and login throttling records."""

import peewee

from models.base import BaseModel, db, first_row


class AdminUser(BaseModel):
    id = peewee.AutoField()
    username = peewee.CharField(max_length=64, unique=True)
    password_hash = peewee.CharField(max_length=255)
    permissions = peewee.CharField(max_length=64, default="review,feedback")
    active = peewee.BooleanField(default=True)
    # Changes when the password changes, so old session cookies stop working.
    session_nonce = peewee.CharField(max_length=32)
    created_at = peewee.CharField(max_length=32)
    last_login_at = peewee.CharField(max_length=32, null=True)  # added by schema version 2
    # Who they are in the team's chat apps (flask --app app link-chat; docs/api.md §22)
    feishu_open_id = peewee.CharField(max_length=128, null=True, unique=True)
    wecom_userid = peewee.CharField(max_length=128, null=True, unique=True)

    # The session user protocol (Flask-Login): the nonce in the id ends sessions on password change.
    is_authenticated = True
    is_anonymous = False

    @property
    def is_active(self) -> bool:
        return self.active

    def get_id(self) -> str:
        return f"{self.id}:{self.session_nonce}"

    def has_permission(self, permission: str) -> bool:
        return permission in self.permissions.split(",")


class LoginAttempt(BaseModel):
    """One failed login; throttle counts these per username and per IP over a window."""

    id = peewee.AutoField()
    username = peewee.CharField(max_length=64, index=True)
    ip = peewee.CharField(max_length=64, index=True)
    at = peewee.CharField(max_length=32, index=True)


class EndedSession(BaseModel):
    """A session signed out before its cookie expired: refused until `expires_at`, then swept."""

    sid = peewee.CharField(max_length=64, primary_key=True)
    expires_at = peewee.CharField(max_length=32, index=True)


def admin_by_pk(pk: int) -> AdminUser | None:
    """The admin with this row id, or None (read on every signed-in request: SQL written for Model.raw,
    as models/review.py's page reads are, since peewee's query building costs more than the read)."""
    return first_row(AdminUser.raw(f"SELECT * FROM admin_user WHERE id = {db.param}", pk))  # noqa: S608
