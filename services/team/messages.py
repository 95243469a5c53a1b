"""What the team reads (docs/api.md §15): short, account and topic first, what happened, the page's link.
Worded when it is sent, from the facts stored with it in the outbox; several pending messages of one channel
fold into one digest as long as it stays under the channel's size limit.
"""

import re
from dataclasses import dataclass
from typing import Any

from flask_babel import gettext, ngettext

from rules.articles import article_url
from rules.labels import FEEDBACK_TYPE_LABELS, edition_failure, live_failure
from services.team.words import LIVE, LIVE_FAILED, PENDING_REVIEW, PUBLISH_FAILED, speaking

TOPIC_CHARS = 60  # a topic or title longer than this is cut (with …): the account and topic lead, briefly
ACCOUNT_CHARS = 40
ERROR_CHARS = 160


@dataclass(frozen=True)
class Message:
    subject: str  # e-mail subject, DingTalk markdown title
    text: str  # plain text: Feishu, e-mail
    markdown: str  # WeCom, DingTalk
    count: int  # how many outbox messages it tells


def one_line(text: Any, limit: int) -> str:
    """Whitespace (newlines included) collapsed, cut to `limit` characters."""
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def link(facts: dict[str, Any], public_url: str) -> str:
    """The page's absolute URL on REVIEW_PUBLIC_URL; unset, the path alone."""
    return public_url + facts["path"]


def _full_width(characters: str) -> dict[int, str]:
    """A translation table to each ASCII character's full-width form (U+FF01-FF5E), which no robot reads."""
    return str.maketrans({character: chr(ord(character) + 0xFEE0) for character in characters})


# Values from agents, client apps and the platform must not become an @mention or a link under the
# service's name, on any channel (docs/api.md §15): mentions and tags get look-alike full-width characters,
# addresses a zero-width space after `:` of `://` and after a dot between letters.
_MENTIONS = _full_width("<>@")
_ADDRESS = re.compile(r":(?=//)|(?<=\w)\.(?=[^\W\d_])")
ZERO_WIDTH_SPACE = "\u200b"
# Markdown the robots would act on (links, emphasis, headings): look-alike full-width characters.
_MARKDOWN = _full_width("[]()*`#~_\\!|")


def inert(text: str) -> str:
    """A value of someone else's as plain words on every channel: no mention, no link."""
    return _ADDRESS.sub(lambda found: found.group() + ZERO_WIDTH_SPACE, text.translate(_MENTIONS))


def _markdown(text: str) -> str:
    """A line of plain words (values already inert) as markdown that renders them as they are."""
    return text.translate(_MARKDOWN)


def _value(facts: dict[str, Any], key: str, limit: int) -> str:
    return inert(one_line(facts.get(key), limit))


def _head(facts: dict[str, Any]) -> str:
    topic = _value(facts, "topic", TOPIC_CHARS) or gettext("(untitled)")
    return gettext("[%(account)s] %(topic)s", account=_value(facts, "account", ACCOUNT_CHARS), topic=topic)


def _what(facts: dict[str, Any]) -> str:
    """What happened, in one line, with the pages' word for where the task now stands."""
    event = facts["event"]
    if event == "task.awaiting_review":
        if facts.get("kind") == "reworked":
            return gettext("Reworked by the agent (%(status)s)", status=PENDING_REVIEW)
        return gettext("New task (%(status)s)", status=PENDING_REVIEW)
    if event == "task.live":  # docs/api.md §18; the article's address follows as a link of its own
        return str(LIVE)
    if event in ("edition.sent", "edition.failed"):  # docs/api.md §21: the titles in order
        return _edition(facts)
    failed = {"task.publish_failed": PUBLISH_FAILED, "task.live_failed": LIVE_FAILED}.get(event)
    if failed is not None:
        detail = _value(facts, "error", ERROR_CHARS)
        if facts.get("reasonCode"):  # going live's reason, in the team's language (docs/api.md §18)
            detail = inert(one_line(live_failure(facts["reasonCode"], facts.get("reasonDetail")), ERROR_CHARS))
        return gettext("%(what)s: %(detail)s", what=failed, detail=detail)
    kind = FEEDBACK_TYPE_LABELS.get(str(facts.get("type"))) or _value(facts, "type", ACCOUNT_CHARS)
    return gettext("New feedback %(number)s (%(type)s)", number=_value(facts, "feedbackNo", ACCOUNT_CHARS), type=kind)


def _edition(facts):
    titles = " | ".join(
        f"{number}. {inert(one_line(title, TOPIC_CHARS))}" for number, title in enumerate(facts.get("titles") or [], 1)
    )
    if facts["event"] == "edition.failed":
        code = facts.get("reasonCode")
        reason = edition_failure(code, facts.get("reasonDetail")) if code else facts.get("error")
        detail = inert(one_line(reason, ERROR_CHARS))
        return gettext("Edition not sent: %(detail)s. %(titles)s", detail=detail, titles=titles)
    counts = facts.get("counts") or {}
    if isinstance(counts.get("sent"), int) and isinstance(counts.get("total"), int):  # null: out of range
        return gettext(
            "Sent to followers (%(sent)s of %(total)s received it): %(titles)s",
            sent=counts["sent"],
            total=counts["total"],
            titles=titles,
        )
    return gettext("Sent to followers: %(titles)s", titles=titles)


def _markdown_link(url):
    return f"[{url}]({url})" if url.startswith("http") else url


def _article(facts):
    """A live article's address (the platform's, https://mp.weixin.qq.com/s/…): shown as a link."""
    return (article_url(facts.get("articleUrl")) or "") if facts.get("event") == "task.live" else ""


def _single(facts, public_url):
    head, what, url = _head(facts), _what(facts), link(facts, public_url)
    article = _article(facts)
    markdown = [
        f"**{_markdown(head)}**",
        _markdown(what),
        _markdown_link(article) if article else "",
        _markdown_link(url),
    ]
    return Message(
        subject=gettext("%(what)s: %(detail)s", what=head, detail=what),
        text="\n".join(filter(None, [head, what, article, url])),
        markdown="\n".join(filter(None, markdown)),
        count=1,
    )


def _digest_title(count):
    return ngettext("Content review: %(num)d new notification", "Content review: %(num)d new notifications", count)


def render(items: list[dict[str, Any]], language: str, public_url: str, limit_bytes: int) -> Message:
    """One message for the longest prefix of `items` (outbox facts, oldest first) that fits in
    `limit_bytes` of markdown and of text; at least the first item."""
    with speaking(language):
        return _render(items, public_url, limit_bytes)


def _render(items, public_url, limit_bytes):
    if len(items) == 1:
        return _single(items[0], public_url)
    text_lines: list[str] = []
    markdown_lines: list[str] = []
    for number, facts in enumerate(items, 1):
        head, what, url = _head(facts), _what(facts), link(facts, public_url)
        article = _article(facts)
        text_line = (
            f"{number}. "
            + gettext("%(what)s: %(detail)s", what=head, detail=what)
            + (f" {article}" if article else "")
            + f"\n   {url}"
        )
        markdown_line = (
            f"{number}. **{_markdown(head)}** {_markdown(what)} "
            + (f"{_markdown_link(article)} " if article else "")
            + _markdown_link(url)
        )
        title = _digest_title(number)
        size = max(
            len("\n".join([title, *text_lines, text_line]).encode()),
            len("\n".join([f"**{title}**", *markdown_lines, markdown_line]).encode()),
        )
        if number > 1 and size > limit_bytes:
            break
        text_lines.append(text_line)
        markdown_lines.append(markdown_line)
    if len(text_lines) == 1:
        return _single(items[0], public_url)
    title = _digest_title(len(text_lines))
    return Message(
        subject=title,
        text="\n".join([title, *text_lines]),
        markdown="\n".join([f"**{title}**", *markdown_lines]),
        count=len(text_lines),
    )
