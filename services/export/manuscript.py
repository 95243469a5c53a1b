"""manuscript.md of a package: the final texts, with every image pointing into images/ (CONTRACT §7).

Text from the task (title, summary, description) is escaped, so a title such as
`![x](http://elsewhere/a.png)` stays text and never becomes an image reference to a file outside
the archive. The body Markdown keeps its formatting; only its image (and link) destinations that
name an exported image are replaced by the relative path of that image, and raw HTML image tags
are escaped: the service renders raw HTML as text, but a Markdown viewer opening manuscript.md
would load them from wherever they point.
"""
import re

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from services.rendering import image_urls
from services.rendering.renderer import PARSER

# An inline destination after `](`: <...>, or a run without spaces (one level of parentheses).
_INLINE = re.compile(r"(\]\(\s*)(<[^<>\n]*>|(?:[^\s()\\]|\\.|\([^\s()\\]*\))+)")
# A link reference definition `[label]: destination` (the destination may start on the next line).
_DEFINITION = re.compile(r"^( {0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*\n?[ \t]*)(<[^<>\n]*>|\S+)", re.M)
# Markdown syntax characters; `_` inside a word (snake_case) cannot open emphasis and stays bare.
_SPECIAL = re.compile(r"([\\`*\[\]<>!#|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LINE_START = re.compile(r"^([-+=]|\d+[.)])", re.M)
# How a Markdown viewer reads the file: raw HTML on (the service's own parser has it off).
_VIEWER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_HTML_IMAGE = re.compile(r"(?<!\\)<(?=img[\s/>])", re.I)
_CODE_SPAN = re.compile(r"(`+).*?(?<!`)\1(?!`)")


def escape_text(text):
    """Plain text -> Markdown that shows exactly that text (no links, images, emphasis, lists)."""
    lines = [line.strip() for line in str(text or "").splitlines()]
    escaped = _SPECIAL.sub(r"\\\1", "\n".join(lines))
    return _LINE_START.sub(_escape_marker, escaped)


def _escape_marker(match):
    """`- x`, `+ x`, `=== `, `1. x`, `1) x` at a line start would be a list or heading: escape it."""
    marker = match.group(1)
    return "\\" + marker if marker in ("-", "+", "=") else marker[:-1] + "\\" + marker[-1]


def _code_lines(markdown):
    """Line numbers inside fenced or indented code blocks (left untouched)."""
    lines = set()
    for token in PARSER.parse(markdown):
        if token.type in ("fence", "code_block") and token.map:
            lines.update(range(*token.map))
    return lines


def _html_images(markdown):
    """(first lines of HTML blocks holding an image tag, whether any inline HTML is one) as a viewer sees them."""
    blocks, inline = set(), False
    for token in _VIEWER.parse(markdown):
        if token.type == "html_block" and _HTML_IMAGE.search(token.content):
            blocks.add(token.map[0])
        inline = inline or any(child.type == "html_inline" and _HTML_IMAGE.search(child.content)
                               for child in token.children or ())
    return blocks, inline


def _escape_outside_code_spans(line):
    spans = [match.span() for match in _CODE_SPAN.finditer(line)]
    return _HTML_IMAGE.sub(lambda m: m.group(0) if any(a <= m.start() < b for a, b in spans) else "\\<", line)


def _escape_html_images(markdown):
    """Raw HTML image tags as text (`\\<img`); an HTML block holding one loses its opening `<` too,
    so it becomes a paragraph in which they are text. Returns (markdown, tags still left)."""
    blocks, inline = _html_images(markdown)
    if not blocks and not inline:
        return markdown, []
    code, lines = _code_lines(markdown), markdown.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if number in code:
            continue
        if number in blocks:
            line = re.sub(r"^( {0,3})<", r"\1\\<", line)
        lines[number] = _escape_outside_code_spans(line)
    escaped = "".join(lines)
    blocks, inline = _html_images(escaped)
    return escaped, ["raw HTML <img> tag"] if blocks or inline else []


def _replace_destinations(segment, mapping):
    def swap(match):
        raw = match.group(2)
        target = unescapeAll(raw[1:-1] if raw.startswith("<") else raw)
        return match.group(1) + mapping[target] if target in mapping else match.group(0)

    return _DEFINITION.sub(swap, _INLINE.sub(swap, segment))


def rewrite_images(markdown, mapping):
    """Replace each destination equal (after Markdown unescaping) to a key of `mapping` by its value.

    Returns (markdown, left) where `left` lists the image sources still not pointing into the
    archive (syntax this rewriter does not understand); the caller refuses the export for them.
    Raw HTML image tags are escaped (_escape_html_images).
    """
    code = _code_lines(markdown)
    out, segment = [], []
    for number, line in enumerate(markdown.splitlines(keepends=True)):
        if number in code:
            out.append(_replace_destinations("".join(segment), mapping))
            out.append(line)
            segment = []
        else:
            segment.append(line)
    out.append(_replace_destinations("".join(segment), mapping))
    rewritten, html_left = _escape_html_images("".join(out))
    targets = set(mapping.values())
    return rewritten, [src for src in image_urls(rewritten) if src not in targets] + html_left


def _header(title, fields):
    lines = [f"# {escape_text(title)}", ""]
    lines += [f"- {label}: {value}" for label, value in fields if value not in (None, "")]
    return lines


def _section(title, lines):
    return ["", f"## {title}", "", *lines]


def topic_only(task):
    """A task without selections: its topic and account, nothing chosen yet."""
    lines = _header(task.topic, [("Account", task.public_account), ("Content type", task.content_type)])
    lines += ["", "No selections have been saved for this task yet."]
    return "\n".join(lines) + "\n"


def article(task, selections, body, cover, body_images, theme=None):
    """`cover` the archive path of the cover (or None), `body_images` archive paths, `body` rewritten."""
    lines = _header(selections.get("title") or task.topic, [
        ("Account", task.public_account), ("Content type", "article"),
        ("Author", escape_text(selections.get("author"))), ("Theme", escape_text(theme))])
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
    return "; ".join(f"{b.get('ratio')} x1={b.get('x1')} y1={b.get('y1')} x2={b.get('x2')} y2={b.get('y2')}"
                     for b in boxes) or None


def image_post(task, selections, images):
    """`images` the archive paths of selections.images, in order; the first is the cover."""
    lines = _header(selections.get("title") or task.topic, [
        ("Account", task.public_account), ("Content type", "image_post"),
        ("Comments", _comments(selections.get("commentSettings"))),
        ("Cover crop", escape_text(_crop(selections.get("coverCrop"))))])
    if selections.get("description") is not None:
        lines += _section("Description", [escape_text(selections["description"])])
    if images:
        lines += _section("Cover", [f"![Cover]({images[0]})"])
        lines += _section("Images", [f"![Image {n}]({path})\n" for n, path in enumerate(images, 1)])
    return "\n".join(lines).rstrip("\n") + "\n"
