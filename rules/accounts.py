"""The team's WeChat accounts (WECHAT_ACCOUNTS, docs/api.md §18): how the setting reads, and the
accounts the request being served knows, for validators that cannot be handed the settings.

`use()` is called for every request (blueprints/hooks.py) and when an app is made; a thread that
never called it sees the two default accounts (rules.vocabulary.DEFAULT_ACCOUNTS).
"""

import re
from contextvars import ContextVar

from rules.vocabulary import DEFAULT_ACCOUNTS

CODE_PATTERN = r"[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?"  # lower-case letters, digits and inner hyphens
_CURRENT: ContextVar[dict[str, str] | None] = ContextVar("accounts", default=None)
_DEFAULT = {code: code for code in DEFAULT_ACCOUNTS}


def parse(text: object) -> dict[str, str]:
    """'a=名称, b' -> {'a': '名称', 'b': 'b'} (a code without a name is named by its code).
    ValueError for a code that is not lower-case letters, digits and hyphens, or one named twice."""
    found: dict[str, str] = {}
    items = text if isinstance(text, (list, tuple)) else str(text or "").split(",")
    for item in items:
        code, _, name = str(item).partition("=")
        code, name = code.strip(), " ".join(name.split())
        if not code and not name:
            continue
        if not re.fullmatch(CODE_PATTERN, code):
            raise ValueError(
                f"{code!r} is not an account code (lower-case letters, digits and inner hyphens, at most 32)"
            )
        if code in found:
            raise ValueError(f"account {code} is named twice")
        found[code] = name or code
    if not found:
        raise ValueError("name at least one account, e.g. silicon-rise=Silicon Rise,carbon-fitness")
    return found


def setting_prefix(code: str) -> str:
    """silicon-rise -> WECHAT_SILICON_RISE: the start of the account's own settings' names."""
    return "WECHAT_" + code.upper().replace("-", "_")


def use(accounts: dict[str, str]) -> None:
    """The accounts of the app serving this thread's request."""
    _CURRENT.set(accounts)


def codes() -> tuple[str, ...]:
    return tuple(_CURRENT.get() or _DEFAULT)


def name(code: str) -> str:
    """The name people know the account by (its code when none is set or it is not configured)."""
    return (_CURRENT.get() or _DEFAULT).get(code, code)
