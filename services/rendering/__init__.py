"""Markdown -> WeChat-safe HTML for a draft's `content` field (docs/api.md §5): markdown-it (raw HTML
escaped) -> one walk over the tokens writing each element with its theme style inline -> nh3 allowlist.

Bodies come from the agent (docs/api.md §14): the parser's bounds are in renderer.py, and a body's images
and preview are remembered by content, so a task page parses each body once, not on every view.
"""

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .renderer import PARSER, ArticleWriter, image_sources
from .sanitize import sanitize
from .themes import THEMES, merged_variables, resolve_name, resolve_styles, theme_config

__all__ = [
    "MAX_HTML_BYTES",
    "MAX_HTML_CHARS",
    "THEMES",
    "ContentTooLarge",
    "check_size",
    "image_urls",
    "render_article",
    "render_preview",
    "theme_config",
]

MAX_HTML_CHARS = 20000
MAX_HTML_BYTES = 1024 * 1024
# What this process remembers (least recently used goes first): the image sources of 512 bodies, and
# rendered previews up to 16 million characters in all (a 200,000-character body renders to ~1 million).
REMEMBERED_BODIES = 512
REMEMBERED_HTML_CHARS = 16_000_000


class _Remembered:
    """A least-recently-used map bounded by the total weight of its values; shared by threads."""

    def __init__(self, capacity: int, weight: Callable[[Any], int]):
        self.capacity, self.weight = capacity, weight
        self.entries: OrderedDict[str, Any] = OrderedDict()
        self.total = 0
        self.lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self.lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
            return value

    def put(self, key: str, value: Any) -> None:
        size = self.weight(value)
        if size > self.capacity:
            return
        with self.lock:
            if key in self.entries:
                self.total -= self.weight(self.entries.pop(key))
            self.entries[key] = value
            self.total += size
            while self.total > self.capacity:
                self.total -= self.weight(self.entries.popitem(last=False)[1])


_SOURCES = _Remembered(REMEMBERED_BODIES, lambda _urls: 1)
_PREVIEWS = _Remembered(REMEMBERED_HTML_CHARS, len)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _sources(markdown: str) -> tuple[str, tuple[str, ...], Any]:
    """(digest, image sources, the tokens if this call parsed them, else None)."""
    digest = _digest(markdown)
    urls = _SOURCES.get(digest)
    if urls is not None:
        return digest, urls, None
    tokens = PARSER.parse(markdown)
    urls = tuple(image_sources(tokens))
    _SOURCES.put(digest, urls)
    return digest, urls, tokens


class ContentTooLarge(ValueError):
    """The rendered body is over the platform's limit; str() is one line for lastError."""


def image_urls(markdown: str) -> list[str]:
    """Every image src in Markdown image syntax, as written, in order, each once (remembered by content:
    a PATCH, its checks and the page ask about the same body several times)."""
    return list(_sources(markdown)[1])


def render_article(
    markdown: str,
    theme_template: str | None = None,
    theme_config: dict | None = None,
    image_map: dict[str, str] | None = None,
) -> str:
    """Markdown -> HTML body for the WeChat draft `content` field; call check_size() on the result.

    `theme_config` ({"cssVariables": {...}}) overlays the template's defaults; `image_map` maps an image src
    as written (see image_urls) to the platform URL from uploadimg; images not in it keep their src.
    """
    name = resolve_name(theme_template)
    styles = resolve_styles(name, merged_variables(name, theme_config))
    writer = ArticleWriter(styles, THEMES[name]["codeStyle"], image_map)
    return sanitize(writer.render(PARSER.parse(markdown)))


def render_preview(
    markdown: str,
    theme_template: str | None,
    theme_config: dict | None,
    placeholders: Callable[[list[str]], dict[str, str]],
) -> str:
    """render_article for a page: `placeholders(image sources)` gives the image_map (what the page shows
    instead of an image). The body is parsed at most once here, and the HTML is remembered by body,
    theme, settings and image map, so showing the same body again costs a lookup (docs/api.md §14)."""
    name = resolve_name(theme_template)
    variables = merged_variables(name, theme_config)
    digest, urls, tokens = _sources(markdown)
    image_map = placeholders(list(urls))
    key = digest + _digest(json.dumps([name, variables, image_map], sort_keys=True))
    html = _PREVIEWS.get(key)
    if html is None:
        writer = ArticleWriter(resolve_styles(name, variables), THEMES[name]["codeStyle"], image_map)
        html = sanitize(writer.render(PARSER.parse(markdown) if tokens is None else tokens))
        _PREVIEWS.put(key, html)
    return html


def check_size(html: str) -> None:
    """Raise ContentTooLarge when `html` is over 1 MB (UTF-8) or over 20,000 characters."""
    size = len(html.encode("utf-8"))
    if size > MAX_HTML_BYTES:
        raise ContentTooLarge(
            f"rendered article is {size:,} bytes; the platform allows at most {MAX_HTML_BYTES:,} "
            "(1 MB); shorten the body"
        )
    if len(html) > MAX_HTML_CHARS:
        raise ContentTooLarge(
            f"rendered article is {len(html):,} characters; the platform allows at most "
            f"{MAX_HTML_CHARS:,}; shorten the body or split it into two articles"
        )
