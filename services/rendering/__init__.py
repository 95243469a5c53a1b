"""Markdown -> WeChat-safe HTML for a draft's `content` field (docs/api.md §5). No Flask here.

    cfg = theme_config("tech-blue", account.theme_overrides)      # {"cssVariables": {...}}
    html = render_article(md, "tech-blue", cfg, image_map={src: uploaded_url, ...})
    check_size(html)                                              # raises ContentTooLarge

Pipeline: markdown-it (commonmark + tables + strikethrough, raw HTML escaped) -> one walk over
the tokens writing each element with its theme style inline -> nh3 allowlist, last.
"""

from .renderer import PARSER, ArticleWriter, image_sources
from .sanitize import sanitize
from .themes import THEMES, merged_variables, resolve_name, resolve_styles
from .themes import theme_config as _theme_config

__all__ = [
    "MAX_HTML_BYTES",
    "MAX_HTML_CHARS",
    "THEMES",
    "ContentTooLarge",
    "check_size",
    "image_urls",
    "render_article",
    "theme_config",
]

MAX_HTML_CHARS = 20000
MAX_HTML_BYTES = 1024 * 1024


class ContentTooLarge(ValueError):
    """The rendered body is over the platform's limit; str() is one line for lastError."""


def theme_config(theme_template: str | None, account_overrides: dict | None = None) -> dict:
    """{"cssVariables": {...}}: template defaults overlaid by per-account overrides.

    `theme_template` None means "default"; an unknown name, an unknown variable or an unsafe
    value raises ValueError. Overrides may be a bare {"--x": value} map or {"cssVariables": {...}}.
    """
    return _theme_config(theme_template, account_overrides)


def image_urls(markdown: str) -> list[str]:
    """Every image src in Markdown image syntax, as written, in order, each once."""
    return image_sources(PARSER.parse(markdown))


def render_article(
    markdown: str,
    theme_template: str | None = None,
    theme_config: dict | None = None,
    image_map: dict[str, str] | None = None,
) -> str:
    """Markdown -> HTML body for the WeChat draft `content` field.

    `theme_config` ({"cssVariables": {...}}, e.g. from theme_config()) overlays the template's
    defaults; `image_map` maps an image src as written in the Markdown (see image_urls) to the
    platform URL from uploadimg; images not in it keep their src. Size is not checked here:
    call check_size() on the result.
    """
    name = resolve_name(theme_template)
    styles = resolve_styles(name, merged_variables(name, theme_config))
    writer = ArticleWriter(styles, THEMES[name]["codeStyle"], image_map)
    return sanitize(writer.render(PARSER.parse(markdown)))


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
