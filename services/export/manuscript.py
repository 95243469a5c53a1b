"""manuscript.md of a package: the final texts, with every image pointing into images/ (docs/api.md §7;
what is escaped and rewritten, and why: docs/package-and-delete.md "Package").
"""

import re
from bisect import bisect_left, bisect_right
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from services.rendering import image_urls
from services.rendering.renderer import PARSER

# An inline destination after `](`: <...>, or a run without spaces (one level of parentheses).
_INLINE = re.compile(r"(\]\(\s*)(<[^<>\n]*>|(?:[^\s()\\]|\\.|\([^\s()\\]*\))+)")
# A link reference definition `[label]: destination` (the destination may start on the next line).
# The quote prefixes are possessive (*+): a space between two `>` fits either repetition, and a
# line of many `> ` that is no definition would otherwise be retried every way (2^n steps).
_DEFINITION = re.compile(
    r"^((?:[ \t]{0,3}>[ \t]?)*+[ \t]{0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?"  # in quotes, lists
    r"\[(?:[^\]\\\n]|\\.)+\]:[ \t]*(?:\n(?:[ \t]{0,3}>[ \t]?)*+)?[ \t]*)(<[^<>\n]*>|\S+)",
    re.M,
)
# Markdown syntax characters; `_` inside a word (snake_case) cannot open emphasis and stays bare.
_SPECIAL = re.compile(r"([\\`*\[\]<>!#|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LINE_START = re.compile(r"^([-+=]|\d+[.)])", re.M)


def _viewer(tables, any_scheme):
    parser = MarkdownIt("commonmark")  # raw HTML on, as Markdown viewers have it
    if tables:
        parser.enable(["table", "strikethrough"])
    if any_scheme:
        parser.validateLink = lambda url: True  # type: ignore[method-assign]  # markdown-it's documented hook
    return parser


# Markdown viewers differ (tables or not, which link schemes they accept), and a body may be read
# differently by each: the service's own parser (html off) and these four must all agree.
_VIEWERS = [_viewer(tables, any_scheme) for tables in (False, True) for any_scheme in (False, True)]
_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n(?=[ \t]*\n)")
# A `<` that could open raw HTML (a tag, comment, declaration or processing instruction), or an
# autolink (<https://…>, <name@example.com>), which stays a link.
_ANGLE = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[\w.!#$%&'*+/=?^`{|}~-]+@[A-Za-z0-9.-]+)>"
    r"|<(?=[A-Za-z/!?])"
)


def escape_text(text: str | None) -> str:
    """Plain text -> Markdown that shows exactly that text (no links, images, emphasis, lists)."""
    lines = [line.strip() for line in str(text or "").splitlines()]
    escaped = _SPECIAL.sub(r"\\\1", "\n".join(lines))
    return _LINE_START.sub(_escape_marker, escaped)


def _escape_marker(match):
    """`- x`, `+ x`, `=== `, `1. x`, `1) x` at a line start would be a list or heading: escape it."""
    marker = match.group(1)
    return "\\" + marker if marker in ("-", "+", "=") else marker[:-1] + "\\" + marker[-1]


def _code_lines(markdown):
    """Line numbers inside fenced or indented code blocks for every reader (left untouched)."""
    common = None
    for parser in (PARSER, *_VIEWERS):
        lines: set[int] = set()
        for token in parser.parse(markdown):
            if token.type in ("fence", "code_block") and token.map:
                lines.update(range(*token.map))
        common = lines if common is None else common & lines
    return common


class _Ranges:
    """Sorted, merged [start, end) ranges; `holds(position)` by bisection (bodies reach 200,000 characters)."""

    def __init__(self, spans):
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.starts, self.ends = [start for start, _ in merged], [end for _, end in merged]

    def holds(self, position):
        index = bisect_right(self.starts, position) - 1
        return index >= 0 and position < self.ends[index]


def _code_spans(text):
    """(start, end) of each inline code span: a run of backticks (not after a backslash) up to the
    next run of the same length, before a blank line. One pass over the runs (a regex scanning
    ahead from every unclosed run took quadratic time on bodies of many runs)."""
    runs = [match.span() for match in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    blanks = [match.start() for match in _BLANK_LINE.finditer(text)]
    spans, index = [], 0
    while index < len(runs):
        start, end = runs[index]
        if start and text[start - 1] == "\\":
            index += 1
            continue
        same = by_length[end - start]
        position = bisect_right(same, index)
        after = bisect_left(blanks, end)
        limit = blanks[after] if after < len(blanks) else len(text)
        if position < len(same) and runs[same[position]][0] <= limit:
            closer = same[position]
            spans.append((start, runs[closer][1]))
            index = closer + 1
        else:
            index += 1
    return spans


def _escaped(segment, position):
    """Whether the character at `position` follows an odd run of backslashes."""
    start = position
    while start > 0 and segment[start - 1] == "\\":
        start -= 1
    return (position - start) % 2 == 1


def _rewrite_segment(segment, mapping):
    """Destinations in `mapping` replaced, and every `<` that would open raw HTML escaped, outside code
    spans and link destinations."""
    code = _Ranges(_code_spans(segment))

    def swap(match):
        raw = match.group(2)
        target = unescapeAll(raw[1:-1] if raw.startswith("<") else raw)
        if target not in mapping or code.holds(match.start()):
            return match.group(0)
        return match.group(1) + mapping[target]

    segment = _DEFINITION.sub(swap, _INLINE.sub(swap, segment))
    code = _Ranges(_code_spans(segment))
    destinations = _Ranges(match.span(2) for pattern in (_INLINE, _DEFINITION) for match in pattern.finditer(segment))

    def escape(match):
        at = match.start()
        if len(match.group(0)) > 1 or _escaped(segment, at) or code.holds(at) or destinations.holds(at):
            return match.group(0)
        return "\\<"

    return _ANGLE.sub(escape, segment)


def _left_for_viewers(markdown, targets):
    """What some reader would still load from outside the archive, or see as raw HTML: the export is
    refused rather than let it through."""
    left = [src for src in image_urls(markdown) if src not in targets]
    for parser in _VIEWERS:
        for token in parser.parse(markdown):
            if token.type == "html_block":
                left.append(token.content.strip()[:80])
            for child in token.children or ():
                if child.type == "html_inline":
                    left.append(child.content[:80])
                elif child.type == "image" and child.attrGet("src") not in targets:
                    left.append(child.attrGet("src"))
    return list(dict.fromkeys(left))


def rewrite_images(markdown: str, mapping: dict[str, str]) -> tuple[str, Any]:
    """Replace each destination equal (after Markdown unescaping) to a key of `mapping` by its value, and
    escape raw HTML. (markdown, left): `left` lists what still points outside the archive; the caller
    refuses the export for them."""
    code = _code_lines(markdown)
    out: list[str] = []
    segment: list[str] = []
    for number, line in enumerate(markdown.splitlines(keepends=True)):
        if number in code:
            out.append(_rewrite_segment("".join(segment), mapping))
            out.append(line)
            segment = []
        else:
            segment.append(line)
    out.append(_rewrite_segment("".join(segment), mapping))
    rewritten = "".join(out)
    return rewritten, _left_for_viewers(rewritten, set(mapping.values()))


def _header(title, fields):
    lines = [f"# {escape_text(title)}", ""]
    lines += [f"- {label}: {value}" for label, value in fields if value not in (None, "")]
    return lines


def _section(title, lines):
    return ["", f"## {title}", "", *lines]


def topic_only(task: Any) -> str:
    """A task without selections: its topic and account, nothing chosen yet."""
    lines = _header(task.topic, [("Account", task.public_account), ("Content type", task.content_type)])
    lines += ["", "No selections have been saved for this task yet."]
    return "\n".join(lines) + "\n"


def article(
    task: Any, selections: dict[str, Any], body: str, cover: str | None, body_images: list, theme: str | None = None
) -> str:
    """`cover` the archive path of the cover (or None), `body_images` archive paths, `body` rewritten."""
    lines = _header(
        selections.get("title") or task.topic,
        [
            ("Account", task.public_account),
            ("Content type", "article"),
            ("Author", escape_text(selections.get("author"))),
            ("Theme", escape_text(theme)),
        ],
    )
    if selections.get("summary") is not None:
        lines += _section("Summary", [escape_text(selections["summary"])])
    if cover:
        lines += _section("Cover", [f"![Cover]({cover})"])
    if body_images:
        lines += _section("Body images", [f"- [{path}]({path})" for path in body_images])
    if body is not None:
        lines += _section("Body", [body.rstrip("\n")])
    return "\n".join(lines) + "\n"


def _comments(settings):
    if not settings:
        return None
    opened = "open" if settings.get("needOpenComment") else "closed"
    return f"{opened}{', fans only' if settings.get('onlyFansCanComment') else ''}"


def _crop(crop):
    boxes = (crop or {}).get("cropPercentList") or []
    return (
        "; ".join(
            f"{b.get('ratio')} x1={b.get('x1')} y1={b.get('y1')} x2={b.get('x2')} y2={b.get('y2')}" for b in boxes
        )
        or None
    )


def image_post(task: Any, selections: dict[str, Any], images: list) -> str:
    """`images` the archive paths of selections.images, in order; the first is the cover."""
    lines = _header(
        selections.get("title") or task.topic,
        [
            ("Account", task.public_account),
            ("Content type", "image_post"),
            ("Comments", _comments(selections.get("commentSettings"))),
            ("Cover crop", escape_text(_crop(selections.get("coverCrop")))),
        ],
    )
    if selections.get("description") is not None:
        lines += _section("Description", [escape_text(selections["description"])])
    if images:
        lines += _section("Cover", [f"![Cover]({images[0]})"])
        lines += _section("Images", [f"![Image {n}]({path})\n" for n, path in enumerate(images, 1)])
    return "\n".join(lines).rstrip("\n") + "\n"
