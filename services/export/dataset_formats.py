"""The dataset's training formats `sft`, `dpo`, `trl-dpo` and `kto` (docs/api.md §20), each a function of
one `raw` record (services/export/dataset.py) to its lines: the editors' choices of the article, then of the
agent's replies to readers. A record without `context.prompt` gives none.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any

TEXT_FIELDS = ("title", "summary", "description", "body")
REPLY_LABELS = {"sent": True, "edited": False, "discarded": False}  # a proposal's state -> kto's label
OPTIONS = {"title": "titles", "summary": "summaries", "description": "descriptions", "body": "bodyOptions"}


def _prompt(record: dict[str, Any]) -> str | None:
    return (record.get("context") or {}).get("prompt")


def article(title: Any, body: str) -> str:
    """An article as one text: its title as a first heading, then the body."""
    return f"# {title}\n\n{body}" if isinstance(title, str) and title else body


def _title(record: dict[str, Any]) -> Any:
    """The title the task holds: the approved one, else the one held at the rejection."""
    if record["final"] is not None:
        return record["final"].get("title")
    return record["edits"]["title"]["final"] if "title" in record["edits"] else record["chosen"].get("title")


def field_prompt(prompt: str, field: str) -> str:
    return prompt if field == "body" else f"{prompt}\n\n[{field}]"


def reply_prompt(prompt: str, comment: str) -> str:
    """The user message of a reply to a reader: the prompt, a blank line, `[reply]` and the comment on the
    next line (docs/api.md §20 `dpo`)."""
    return f"{prompt}\n\n[reply]\n{comment}"


def reply_pairs(record: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(the comment, the reply the editor sent, the agent's proposal it replaced): each proposal `edited`
    whose text the reply standing differs from (docs/api.md §20 `dpo`)."""
    for comment in record.get("comments") or []:
        reply = comment["reply"]
        if not isinstance(reply, str):  # none sent, or taken back
            continue
        replaced = {p["content"] for p in comment["proposals"] if p["state"] == "edited" and p["content"] != reply}
        for proposal in sorted(replaced, key=[p["content"] for p in comment["proposals"]].index):  # each once
            yield comment["content"], reply, proposal


def reply_labels(record: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(the comment, a proposal, its label): sent unchanged true, edited or discarded false, one still
    waiting none (docs/api.md §20 `kto`)."""
    for comment in record.get("comments") or []:
        for proposal in comment["proposals"]:
            if proposal["state"] in REPLY_LABELS:
                yield comment["content"], proposal["content"], REPLY_LABELS[proposal["state"]]


def _text(record: dict[str, Any], field: str, value: str) -> str:
    return article(_title(record), value) if field == "body" else value


def _approved_article(record: dict[str, Any]) -> str | None:
    final = record["final"]
    if record["kind"] != "article" or record["decision"] != "approved" or not isinstance(final.get("body"), str):
        return None
    return article(final.get("title"), final["body"])


def sft(record: dict[str, Any]) -> list[dict[str, Any]]:
    prompt, answer = _prompt(record), _approved_article(record)
    if not prompt or answer is None:
        return []
    return [{"messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]}]


def _options(record: dict[str, Any], field: str) -> list[str]:
    listed = (record["candidates"] or {}).get(OPTIONS[field]) or []
    return [option["content"] if field == "body" else option for option in listed]


def preference_pairs(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(field, preferred, not preferred) of an approved task, each pair once (docs/api.md §20 `dpo`)."""
    if record["decision"] != "approved":
        return []
    final, pairs = record["final"], []
    for entry in record["rework"]:
        field, before = entry["field"], entry["before"]
        if (
            field in TEXT_FIELDS
            and isinstance(before, str)
            and isinstance(final.get(field), str)
            and before != final[field]
        ):
            pairs.append((field, final[field], before))
    for field in TEXT_FIELDS:
        picked, options = record["chosen"].get(field), _options(record, field)
        if picked in options:
            pairs += [(field, picked, other) for other in options if other != picked]
    return list(dict.fromkeys(pairs))


def _messages(record: dict[str, Any]) -> Iterator[tuple[list[dict[str, str]], ...]]:
    """Per preference pair: (the user's message, the preferred answer, the other), each a list of messages.
    One pair at a time: a long article's pairs, each with its body written out, are not all held at once."""
    prompt = _prompt(record)
    if not prompt:
        return
    for field, preferred, other in preference_pairs(record):
        yield (
            [{"role": "user", "content": field_prompt(prompt, field)}],
            [{"role": "assistant", "content": _text(record, field, preferred)}],
            [{"role": "assistant", "content": _text(record, field, other)}],
        )
    for comment, reply, proposal in reply_pairs(record):
        yield (
            [{"role": "user", "content": reply_prompt(prompt, comment)}],
            [{"role": "assistant", "content": reply}],
            [{"role": "assistant", "content": proposal}],
        )


def dpo(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """OpenAI's preference fine-tuning file."""
    for user, preferred, other in _messages(record):
        yield {"input": {"messages": user}, "preferred_output": preferred, "non_preferred_output": other}


def trl_dpo(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The same pairs in TRL's conversational preference format (prompt, chosen and rejected as message
    lists), which its DPOTrainer reads and OpenAI's format does not give it."""
    for user, preferred, other in _messages(record):
        yield {"prompt": user, "chosen": preferred, "rejected": other}


def kto(record: dict[str, Any]) -> list[dict[str, Any]]:
    prompt = _prompt(record)
    if not prompt:
        return []
    lines = []
    answer = _approved_article(record)
    if answer is not None:
        lines.append({"prompt": prompt, "completion": answer, "label": True})
    final = record["final"] or {}
    for entry in record["rework"]:
        if (
            entry["field"] in TEXT_FIELDS
            and isinstance(entry["before"], str)
            and entry["before"] != final.get(entry["field"])
        ):  # rejected, then approved after all: no label
            line = {
                "prompt": field_prompt(prompt, entry["field"]),
                "completion": _text(record, entry["field"], entry["before"]),
                "label": False,
            }
            if line not in lines:
                lines.append(line)
    seen = set()  # a set, not `in lines`: an article may have thousands of proposals
    for comment, proposal, label in reply_labels(record):
        if (comment, proposal, label) not in seen:
            seen.add((comment, proposal, label))
            lines.append({"prompt": reply_prompt(prompt, comment), "completion": proposal, "label": label})
    return lines


FORMATTERS: dict[str, Callable[[dict[str, Any]], Iterable[dict[str, Any]]]] = {
    "sft": sft,
    "dpo": dpo,
    "trl-dpo": trl_dpo,
    "kto": kto,
}
