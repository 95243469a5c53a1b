"""The only article addresses the service keeps and shows (docs/api.md §18): the platform's own pages.

The platform writes them `http://mp.weixin.qq.com/s?__biz=…#rd` or `http://mp.weixin.qq.com/s/<id>` in its
events and answers; they are kept as https (only the scheme rewritten). Anything else in a poll answer or a
pushed event (another host, a port or user info, `javascript:`, a line break or a robot's `<@all>` mention
smuggled into the path) is stored as null, so it never reaches a page, the agent or a robot."""

import re

PLATFORM_HOST = "mp.weixin.qq.com"
ARTICLE_URL_PREFIX = f"https://{PLATFORM_HOST}/"
_PLAIN_PREFIX = f"http://{PLATFORM_HOST}/"  # the platform's own spelling, shown as https
MAX_ARTICLE_URL = 2048
# The characters of the platform's addresses (/s/<id>, /s?__biz=…&mid=…#rd): nothing that ends a Markdown
# link, quotes, mentions or breaks a line in a robot's message ([]()!*'@ space, controls).
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~/?=&%#:]*")


def article_url(value: object) -> str | None:
    """`value` as https when it is an http(s)://mp.weixin.qq.com/ address made of URL characters; else None.
    The host must be followed by `/` at once, so no port and no user info get through."""
    if not isinstance(value, str):
        return None
    if value.startswith(_PLAIN_PREFIX):
        value = ARTICLE_URL_PREFIX + value[len(_PLAIN_PREFIX) :]
    if len(value) > MAX_ARTICLE_URL or not value.startswith(ARTICLE_URL_PREFIX):
        return None
    return value if _URL_CHARS.fullmatch(value) else None
