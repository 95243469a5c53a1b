"""Who an admin is in the team's chat (docs/api.md §22): `flask --app app link-chat`."""

from models import AdminUser, immediate
from services.errors import Conflict, NotFound, ValidationFailed

_FIELDS = {"feishu": AdminUser.feishu_open_id, "wecom": AdminUser.wecom_userid}


def link_chat(username: str, feishu: str | None, wecom: str | None, unlink: bool = False) -> AdminUser:
    """Set (or with `unlink`, remove) the admin's Feishu open_id and WeCom userid (docs/api.md §22)."""
    given = {"feishu": feishu, "wecom": wecom}
    if not unlink and not any(given.values()):
        raise ValidationFailed("give --feishu OPEN_ID, --wecom USERID or --unlink", {"identity": ["none given"]})
    with immediate():
        user = AdminUser.get_or_none(AdminUser.username == username)
        if user is None:
            raise NotFound(f"no admin named {username}")
        for platform, value in given.items():
            field = _FIELDS[platform]
            if unlink and (value is None or value == getattr(user, field.name)):
                if value is not None or not any(given.values()):
                    setattr(user, field.name, None)
                continue
            if value is None:
                continue
            value = value.strip()
            if not value or len(value) > 128:
                raise ValidationFailed(f"the {platform} identity must be 1 to 128 characters", {platform: ["length"]})
            other = AdminUser.get_or_none((field == value) & (AdminUser.id != user.id))
            if other is not None:
                raise Conflict(
                    f"that {platform} identity is linked to {other.username}; unlink it there first",
                    {platform: [other.username]},
                )
            setattr(user, field.name, value)
        user.save()
        return user
