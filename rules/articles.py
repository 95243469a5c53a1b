"""The only article addresses the service keeps and shows (docs/api.md §18): the platform's own pages.

Anything else in a poll answer or a pushed event (another host, `javascript:`, a line break or a robot's
`<@all>` mention smuggled into the path) is stored as null, so it never reaches a page, the agent or a robot."""

import re

ARTICLE_URL_PREFIX = "https://mp.weixin.qq.com/"
MAX_ARTICLE_URL = 2048
# The characters of the platform's addresses (/s/<id>, /s?__biz=…&mid=…#rd): nothing that ends a Markdown
# link, quotes, mentions or breaks a line in a robot's message ([]()!*'@ space, controls).
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~/?=&%#:]*")


def article_url(value: object) -> str | None:
    """`value` when it is an https://mp.weixin.qq.com/ address made of URL characters; else None."""
    if not isinstance(value, str) or len(value) > MAX_ARTICLE_URL or not value.startswith(ARTICLE_URL_PREFIX):
        return None
    return value if _URL_CHARS.fullmatch(value) else None
