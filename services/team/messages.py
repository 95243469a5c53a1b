"""What the team reads (docs/api.md §15): short, account and topic first, what happened, the page's link.

A message is rendered when it is sent, from the facts stored with it in the outbox, in the
language of REVIEW_DEFAULT_LANGUAGE (Chinese unless `en`). Several pending messages of one channel
are folded into one digest naming every task, as long as it stays under the channel's size limit.
"""
from dataclasses import dataclass
from typing import Any

WORDS: dict[str, dict[str, Any]] = {
    "zh-CN": {
        "created": "新任务待审核", "reworked": "智能体已按退回意见修改，待再次审核", "publish_failed": "发布失败",
        "feedback": "收到新反馈", "live": "已发表给读者",
        "live_failed": "发表失败", "digest": "内容审核：{count} 条新通知", "head": "【{account}】{topic}",
        "colon": "：", "untitled": "（无标题）", "kind": "（{}）",
        "types": {"bug": "问题", "suggestion": "建议", "content": "内容", "account": "账号", "other": "其他"},
    },
    "en": {
        "created": "New task awaiting review", "reworked": "Reworked by the agent, awaiting review again",
        "publish_failed": "Publish failed", "feedback": "New feedback", "live": "Live for readers",
        "live_failed": "Going live failed",
        "digest": "Content review: {count} new notifications",
        "head": "[{account}] {topic}", "colon": ": ", "untitled": "(untitled)", "kind": " ({})", "types": {},
    },
}
TOPIC_CHARS = 60  # a topic or title longer than this is cut (with …): the account and topic lead, briefly
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
    return text if len(text) <= limit else text[:limit - 1] + "…"


def link(facts: dict[str, Any], public_url: str) -> str:
    """The page's absolute URL on REVIEW_PUBLIC_URL; unset, the path alone."""
    return public_url + facts["path"]


def _head(facts, words):
    topic = one_line(facts.get("topic"), TOPIC_CHARS) or words["untitled"]
    return words["head"].format(account=one_line(facts.get("account"), 40), topic=topic)


def _what(facts, words):
    """What happened, in one line."""
    event = facts["event"]
    if event == "task.awaiting_review":
        return words[facts.get("kind", "created")]
    if event == "task.live":  # docs/api.md §18; the article's address follows as a link of its own
        return words["live"]
    if event == "task.live_failed":
        return words["live_failed"] + words["colon"] + one_line(facts.get("error"), ERROR_CHARS)
    if event == "task.publish_failed":
        return words["publish_failed"] + words["colon"] + one_line(facts.get("error"), ERROR_CHARS)
    kind = words["types"].get(facts.get("type"), facts.get("type"))
    return f"{words['feedback']} {facts.get('feedbackNo')}" + words["kind"].format(kind)


# Markdown the robots would act on (links, mentions, emphasis, headings), turned into look-alike
# full-width characters: topics, titles and app names come from agents and client apps, and must not
# become a link or an @mention in the team's chat under the service's name.
_INERT = str.maketrans({"[": "［", "]": "］", "(": "（", ")": "）", "<": "＜", ">": "＞", "*": "＊", "`": "｀",
                        "#": "＃", "~": "～", "_": "＿", "\\": "＼", "!": "！", "|": "｜"})


def inert(text: str) -> str:
    return text.translate(_INERT)


def _markdown_link(url):
    return f"[{url}]({url})" if url.startswith("http") else url


def _article(facts):
    """A live article's address (the platform's, https://mp.weixin.qq.com/s/…): shown as a link."""
    url = str(facts.get("articleUrl") or "") if facts.get("event") == "task.live" else ""
    return url if url.startswith(("https://", "http://")) and " " not in url else ""


def _single(facts, words, public_url):
    head, what, url = _head(facts, words), _what(facts, words), link(facts, public_url)
    article = _article(facts)
    return Message(subject=f"{head}{words['colon']}{what}", text="\n".join(filter(None, [head, what, article, url])),
                   markdown="\n".join(filter(None, [f"**{inert(head)}**", inert(what),
                                                     _markdown_link(article) if article else "", _markdown_link(url)])),
                   count=1)


def render(items: list[dict[str, Any]], language: str, public_url: str, limit_bytes: int) -> Message:
    """One message for the longest prefix of `items` (outbox facts, oldest first) that fits in
    `limit_bytes` of markdown and of text; at least the first item."""
    words = WORDS.get(language, WORDS["zh-CN"])
    if len(items) == 1:
        return _single(items[0], words, public_url)
    text_lines: list[str] = []
    markdown_lines: list[str] = []
    for number, facts in enumerate(items, 1):
        head, what, url = _head(facts, words), _what(facts, words), link(facts, public_url)
        article = _article(facts)
        text_line = f"{number}. {head}{words['colon']}{what}" + (f" {article}" if article else "") + f"\n   {url}"
        markdown_line = (f"{number}. **{inert(head)}** {inert(what)} "
                         + (f"{_markdown_link(article)} " if article else "") + _markdown_link(url))
        title = words["digest"].format(count=number)
        size = max(len("\n".join([title, *text_lines, text_line]).encode()),
                   len("\n".join([f"**{title}**", *markdown_lines, markdown_line]).encode()))
        if number > 1 and size > limit_bytes:
            break
        text_lines.append(text_line)
        markdown_lines.append(markdown_line)
    if len(text_lines) == 1:
        return _single(items[0], words, public_url)
    title = words["digest"].format(count=len(text_lines))
    return Message(subject=title, text="\n".join([title, *text_lines]),
                   markdown="\n".join([f"**{title}**", *markdown_lines]), count=len(text_lines))
