"""Fenced code -> Pygments colours as inline styles, line breaks as <br>.

Pygments tokens are walked here rather than with HtmlFormatter(noclasses=True), to skip the base colour,
merge runs of one style, and write line breaks as <br> and significant spaces as &nbsp;: WeChat's editor
collapses newlines and repeated spaces inside <pre>. No literal newline is left, so `white-space:pre`
cannot double the breaks.
"""

import re
from functools import lru_cache

from markdown_it.common.utils import escapeHtml
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Token
from pygments.util import ClassNotFound

_SPACE_RUN = re.compile(" +")
_NBSP = "&nbsp;"
_FLAGS = {"bold": "font-weight:bold", "italic": "font-style:italic", "underline": "text-decoration:underline"}


@lru_cache(maxsize=128)
def _lexer(language):
    """A reusable lexer for the fence's language, or None (plain text) when unknown."""
    if not language:
        return None
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=16)
def _style(style_name):
    return get_style_by_name(style_name)


@lru_cache(maxsize=4096)
def _token_style(style_name, ttype):
    """Inline CSS for one token type; the base colour is left to inheritance from <pre>."""
    style = _style(style_name)
    spec = style.style_for_token(ttype)
    base_color = style.style_for_token(Token)["color"]
    parts = [f"color:#{spec['color']}"] if spec["color"] and spec["color"] != base_color else []
    if spec["bgcolor"]:
        parts.append(f"background-color:#{spec['bgcolor']}")
    parts += [css for flag, css in _FLAGS.items() if spec[flag]]
    return ";".join(parts)


def _keep_spaces(html, after_space):
    """Leading spaces of a line, and every space after another, become &nbsp;."""
    if "  " not in html and not (after_space and html.startswith(" ")):
        return html

    def run(match):
        if match.start() == 0 and after_space:
            return _NBSP * len(match.group())
        return " " + _NBSP * (len(match.group()) - 1)

    return _SPACE_RUN.sub(run, html)


def _lines(code, language, style_name):
    """[[(style, text), …] per line], neighbouring runs of one style merged."""
    lexer = _lexer(language)
    tokens = [(None, code)] if lexer is None else lexer.get_tokens(code)
    lines: list[list] = [[]]
    for ttype, value in tokens:
        style = "" if ttype is None else _token_style(style_name, ttype)
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if not part:
                continue
            line = lines[-1]
            # Spaces look the same in any colour, so they join the previous run.
            if line and (line[-1][0] == style or part.isspace()):
                line[-1] = (line[-1][0], line[-1][1] + part)
            else:
                line.append((style, part))
    return lines


# The same draft is rendered again and again (preview, publish, retry) and lexing is the costliest step.
@lru_cache(maxsize=512)
def highlight(code: str, info: str, style_name: str) -> str:
    """Inner HTML of <code> for a fenced block whose info string is `info`."""
    code = code.expandtabs(4)
    if code.endswith("\n"):
        code = code[:-1]
    language = info.split(maxsplit=1)[0].lower() if info.strip() else ""
    out = []
    for line in _lines(code, language, style_name):
        after_space = True
        pieces = []
        for style, text in line:
            html = _keep_spaces(escapeHtml(text), after_space)
            after_space = text.endswith(" ")
            pieces.append(f'<span style="{style}">{html}</span>' if style else html)
        out.append("".join(pieces))
    return "<br>".join(out)
