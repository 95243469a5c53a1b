"""Markdown tokens -> HTML whose every element carries its theme style inline (no <style>, class or id).

Not css-inline: parsing the HTML again with a selector engine cost as much as this whole walk, and the
context roles (a list in a list, text in a <li>) would need selectors to say what the tokens already say.
"""

from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from babel.support import Translations
from markdown_it import MarkdownIt, helpers
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block.table import table
from markdown_it.rules_inline import StateInline

from rules.limits import MAX_TABLE_COLUMNS

from .code_highlight import highlight

WECHAT_HOST = "mp.weixin.qq.com"
# The heading of the numbered references is article content, in the article's language: the catalogue's
# zh_Hans_CN entry, whatever language a page or a thread is in (docs/api.md §5).
_ARTICLE_WORDS = Translations.load(str(Path(__file__).resolve().parents[2] / "translations"), ["zh_Hans_CN"])
REFERENCES_TITLE = _ARTICLE_WORDS.gettext("References")


def _never(pos: int) -> int:
    # Facts about the "[" at `pos`, kept in the inline state's own cache of skipped tokens, whose keys
    # are positions (>= 0): negative keys never meet them. -1-2p: it never closes; -2-2p: a link label
    # from it runs into a nested link first (refused where nesting is not allowed).
    return -1 - 2 * pos


def _nested(pos: int) -> int:
    return -2 - 2 * pos


def link_label_end(state: StateInline, start: int, disableNested: bool = False) -> int:
    """markdown-it's parseLinkLabel (the "]" closing the "[" at `start`, or -1), remembering what one walk
    learns about every "[" it crosses (docs/api.md §14), where markdown-it walks again from each.

    The walk from an opener steps over the same tokens as a walk from any "[" it crosses (each token's end
    is cached by position), so an opener still open when the walk runs out never closes, and one crossed
    before a nested link meets it too. tests/rendering/test_render_bounds.py compares the tokens with
    markdown-it's own."""
    cache = state.cache
    if _never(start) in cache or (disableNested and _nested(start) in cache):
        return -1
    old_pos = state.pos
    state.pos = start + 1
    openers = [start]
    fact = _never
    while state.pos < state.posMax:
        pos = state.pos
        marker = state.src[pos]
        if marker == "]":
            if len(openers) == 1:
                state.pos = old_pos
                return pos
            openers.pop()
        elif marker == "[":
            if _never(pos) in cache:  # an opener inside that never closes: neither do those around it
                break
            if disableNested and _nested(pos) in cache:
                fact = _nested
                break
        state.md.inline.skipToken(state)
        if marker == "[":
            if state.pos == pos + 1:
                openers.append(pos)  # a "[" of text: one level deeper
            elif disableNested:
                fact = _nested
                break
    for opener in openers:
        cache[fact(opener)] = -1
    state.pos = old_pos
    return -1


def bounded_table(state: Any, startLine: int, endLine: int, silent: bool) -> bool:
    """GFM tables of at most MAX_TABLE_COLUMNS columns, counted on the delimiter row (docs/api.md §14)."""
    if startLine + 1 < endLine:
        second = startLine + 1
        delimiter = state.src[state.bMarks[second] + state.tShift[second] : state.eMarks[second]]
        if delimiter.count("|") > MAX_TABLE_COLUMNS + 1:
            return False
    return table(state, startLine, endLine, silent)


def _bounded_helpers() -> ModuleType:
    """markdown-it's link helpers with link_label_end (the link and image rules call them via `md.helpers`)."""
    bounded = ModuleType(f"{__name__}.link_helpers")
    bounded.__dict__.update({name: getattr(helpers, name) for name in helpers.__all__})
    bounded.parseLinkLabel = link_label_end  # type: ignore[attr-defined]
    return bounded


def _build_parser(bounded=True):
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    if bounded:  # bench/bench_bounds.py builds the unbounded one to compare
        md.helpers = _bounded_helpers()
        md.block.ruler.at("table", bounded_table, {"alt": ["paragraph", "reference"]})
    # Destinations stay as written (after unescaping), so image_urls() and image_map keys agree with the
    # Markdown text; the renderer percent-encodes them itself (normalize_link) when it writes href/src.
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]  # markdown-it's documented hook
    # Every destination is parsed as a link or image, whatever its scheme, so image_urls() finds
    # `![x](file:///…)` too and the review rules refuse it; nh3 (last) drops unsafe schemes.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.parse("[a](b) ![c](d)\n\n| t |\n|---|\n| ~~x~~ |")  # compile rule chains once, up front
    return md


PARSER = _build_parser()


@lru_cache(maxsize=1024)
def normalize_link(url: str) -> str:
    """markdown-it's own URL normalisation (percent-encoding, punycode)."""
    return MarkdownIt.normalizeLink(PARSER, url)


def _open(tag, style, attrs=""):
    return f'<{tag}{attrs} style="{style}">' if style else f"<{tag}{attrs}>"


def _is_wechat_link(url):
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and parts.hostname == WECHAT_HOST
    except ValueError:
        return False


def plain_text(tokens: Any) -> str:
    """Text of inline tokens, as a reader sees it (used for alt text and reference titles)."""
    parts = []
    for tok in tokens:
        if tok.type in ("text", "code_inline"):
            parts.append(tok.content)
        elif tok.type == "image":
            parts.append(plain_text(tok.children or ()))
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


# token type -> tag, which is also the theme role; markdown-it's <s> is written as <del>
_INLINE_OPEN = {"strong_open": "strong", "em_open": "em", "s_open": "del"}
_INLINE_CLOSE = {"strong_close": "</strong>", "em_close": "</em>", "s_close": "</del>"}


class ArticleWriter:
    """One render: walks the block tokens once, collecting external links as references."""

    def __init__(self, styles, code_style, image_map):
        self.styles = styles
        self.code_style = code_style
        self.image_map = image_map or {}
        self.out = []
        self.references = {}  # normalized url -> (number, link text, url as written)
        self._inline_closers = []

    def render(self, tokens: Any) -> str:
        out, s = self.out, self.styles
        out.append(_open("section", s["wrapper"]))
        closers: list[tuple[str, str]] = []  # (tag, closing html) of every open block
        for tok in tokens:
            if tok.type == "inline":
                self._inline(tok.children or ())
            elif tok.nesting == 1:
                parent = closers[-1][0] if closers else None
                opener, closer = self._open_block(tok, parent, closers)
                out.append(opener)
                closers.append((tok.tag, closer))
            elif tok.nesting == -1:
                out.append(closers.pop()[1])
            else:
                self._leaf(tok)
        self._references()
        out.append("</section>")
        return "".join(out)

    def _open_block(self, tok, parent, closers):
        s, kind = self.styles, tok.type
        if kind == "paragraph_open":
            # WeChat's editor rewraps bare text inside <li> in its own <p>/<span> and pulls a following
            # nested list out of the item; text in its own <section>, the nested list after it in the same
            # <li>, is the shape Markdown-to-WeChat tools use so both stay put (a tight list's <p> too).
            if parent == "li":
                return _open("section", s["li_section"]), "</section>"
            return _open("p", s["quote_p" if parent == "blockquote" else "p"]), "</p>"
        if kind in ("bullet_list_open", "ordered_list_open"):
            nested = any(tag in ("ul", "ol") for tag, _ in closers)
            role = tok.tag + ("_nested" if nested else "")
            start = tok.attrs.get("start")
            attrs = f' start="{int(start)}"' if start not in (None, 1) else ""
            return _open(tok.tag, s[role], attrs), f"</{tok.tag}>"
        if kind == "table_open":
            # overflow does not apply to table boxes, so a wrapping block is what scrolls.
            return _open("section", s["table_wrap"]) + _open("table", s["table"]), "</table></section>"
        if kind in ("th_open", "td_open"):
            style = s[tok.tag]
            align = tok.attrs.get("style")
            if align:
                style = f"{style};{align}" if style else str(align)
            return _open(tok.tag, style), f"</{tok.tag}>"
        # headings, blockquote, li, thead, tbody, tr: the theme's role is the tag name
        return _open(tok.tag, s.get(tok.tag, "")), f"</{tok.tag}>"

    def _leaf(self, tok):
        s = self.styles
        if tok.type in ("fence", "code_block"):
            code = highlight(tok.content, tok.info if tok.type == "fence" else "", self.code_style)
            self.out.append(f"{_open('pre', s['pre'])}{_open('code', s['code_block'])}{code}</code></pre>")
        elif tok.type == "hr":
            self.out.append(_open("hr", s["hr"]))
        elif tok.content:  # html_block cannot occur with html=False; stay safe anyway
            self.out.append(f"{_open('p', s['p'])}{escapeHtml(tok.content)}</p>")

    def _inline(self, children):
        out, s = self.out, self.styles
        for idx, tok in enumerate(children):
            kind = tok.type
            if kind == "text":
                out.append(escapeHtml(tok.content))
            elif kind == "softbreak":
                out.append("\n")
            elif kind == "hardbreak":
                out.append("<br>")
            elif kind == "code_inline":
                out.append(f"{_open('code', s['code'])}{escapeHtml(tok.content)}</code>")
            elif kind in _INLINE_OPEN:
                out.append(_open(_INLINE_OPEN[kind], s[_INLINE_OPEN[kind]]))
            elif kind in _INLINE_CLOSE:
                out.append(_INLINE_CLOSE[kind])
            elif kind == "link_open":
                self._link_open(tok, children, idx)
            elif kind == "link_close":
                out.append(self._inline_closers.pop())
            elif kind == "image":
                self._image(tok)

    def _link_open(self, tok, children, idx):
        s = self.styles
        written = tok.attrs.get("href") or ""
        url = normalize_link(written)
        if _is_wechat_link(url):
            self.out.append(_open("a", s["a"], f' href="{escapeHtml(url)}"'))
            self._inline_closers.append("</a>")
            return
        end = next(i for i in range(idx + 1, len(children)) if children[i].type == "link_close")
        text = plain_text(children[idx + 1 : end]).strip()
        number = self.references.setdefault(url, (len(self.references) + 1, text, written))[0]
        self.out.append(_open("span", s["link_text"]))
        self._inline_closers.append(f"</span>{_open('sup', s['sup'])}[{number}]</sup>")

    def _image(self, tok):
        written = tok.attrs.get("src") or ""
        url = normalize_link(written)
        src = self.image_map.get(written) or self.image_map.get(url) or url
        alt = escapeHtml(plain_text(tok.children or ()))
        self.out.append(_open("img", self.styles["img"], f' src="{escapeHtml(src)}" alt="{alt}"'))

    def _references(self):
        if not self.references:
            return
        s = self.styles
        self.out.append(f"{_open('h3', s['refs_heading'])}{escapeHtml(REFERENCES_TITLE)}</h3>")
        for number, text, written in self.references.values():
            label = written if not text or text == written else f"{text}: {written}"
            self.out.append(f"{_open('p', s['refs_item'])}[{number}] {escapeHtml(label)}</p>")


def image_sources(tokens: Any) -> list[str]:
    """Image destinations as written, in document order, each once."""
    seen: dict[str, None] = {}
    stack = list(reversed(tokens))
    while stack:
        tok = stack.pop()
        if tok.type == "image":
            seen.setdefault(tok.attrs.get("src") or "", None)
        if tok.children:
            stack.extend(reversed(tok.children))
    return [src for src in seen if src]
