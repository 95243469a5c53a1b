"""What the agent changed since the rejection (docs/api.md §15 "What changed since the rejection").

record(selections, values) -> the `changes` ({key: {"before", "after"}}) of a rework PATCH, and
`textDiff` ({key: [[op, length], ...]}) for its text elements: the diff is computed once, when the
patch is recorded, not on every page view. rework_rounds(task JSON) -> what the task page shows:
the current round's changes per element and each rework event's own (earlier rounds, from the
timeline). Text is diffed by character with difflib.SequenceMatcher (Chinese has no spaces between
words, so by character is the only meaningful grain); content is never turned into markup here.
"""
from difflib import SequenceMatcher
from typing import Any

from rules.vocabulary import SELECTION_KEYS
from services.asset_refs import REF_FIELDS, ref_key, resolve_many

TEXT_KEYS = ("author", "title", "summary", "body", "description")
IMAGE_KEYS = (*REF_FIELDS, "coverCrop")
# Character pairs compared at most in one changed block (SequenceMatcher's work grows with both
# lengths): a 200,000-character body rewritten on one line shows as removed and added instead.
CHAR_DIFF_BUDGET = 4_000_000
CONTEXT = 80  # unchanged characters kept on each side of a change in a long text
_OPS = {"equal": "=", "delete": "-", "insert": "+"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _push(out: list, op: str, length: int) -> None:
    if length <= 0:
        return
    if out and out[-1][0] == op:
        out[-1][1] += length
    else:
        out.append([op, length])


def _char_ops(before: str, after: str, out: list) -> None:
    if len(before) * len(after) > CHAR_DIFF_BUDGET:
        _push(out, "-", len(before))
        _push(out, "+", len(after))
        return
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "replace":
            _push(out, "-", i2 - i1)
            _push(out, "+", j2 - j1)
        else:
            _push(out, _OPS[tag], (i2 - i1) if tag != "insert" else (j2 - j1))


def text_ops(before: str, after: str) -> list[list]:
    """[[op, length], ...] with op "=" (kept), "-" (removed from before), "+" (added in after).

    Lines first, then characters inside each changed block of lines: a long body costs the size of
    its changes, not the square of its length. autojunk off: in Chinese text the common characters
    would otherwise count as junk and the diff would miss them."""
    out: list = []
    lines_a, lines_b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, lines_a, lines_b, autojunk=False).get_opcodes():
        old, new = "".join(lines_a[i1:i2]), "".join(lines_b[j1:j2])
        if tag == "equal":
            _push(out, "=", len(old))
        else:
            _char_ops(old, new, out)
    return out


def segments(before: str, after: str, ops: list | None = None) -> list[tuple[str, str]]:
    """(op, text) pieces of the diff; stored `ops` that do not fit the texts are computed again."""
    if ops is None or sum(n for op, n in ops if op != "+") != len(before) \
            or sum(n for op, n in ops if op != "-") != len(after):
        ops = text_ops(before, after)
    out, i, j = [], 0, 0
    for op, length in ops:
        if op == "+":
            out.append(("+", after[j:j + length]))
            j += length
        else:
            out.append((op, before[i:i + length]))
            i += length
            j += length if op == "=" else 0
    return out


def _elide(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Long unchanged stretches keep CONTEXT characters next to each change; "…" marks the cut."""
    out: list[tuple[str, str]] = []
    for index, (op, text) in enumerate(pieces):
        keep_head = index > 0
        keep_tail = index < len(pieces) - 1
        if op != "=" or len(text) <= CONTEXT * (keep_head + keep_tail) + 20:
            out.append((op, text))
            continue
        if keep_head:
            out.append(("=", text[:CONTEXT]))
        out.append(("…", ""))
        if keep_tail:
            out.append(("=", text[-CONTEXT:]))
    return out


def record(selections: dict[str, Any] | None, values: dict[str, Any]) -> dict[str, Any]:
    """`changes` and `textDiff` of a rework PATCH: `selections` as they stood (the values at the
    rejection: nothing else writes them during rework), `values` the patched ones."""
    selections = selections or {}
    changes = {key: {"before": selections.get(key), "after": value}
               for key, value in values.items() if selections.get(key) != value}
    diffs = {key: text_ops(_text(change["before"]), _text(change["after"]))
             for key, change in changes.items() if key in TEXT_KEYS}
    return {"changes": changes, "textDiff": diffs}


def _crop_box(crops: Any) -> dict[str, float] | None:
    """The first crop of a coverCrop as CSS percentages {left, top, width, height}; None unless numbers."""
    try:
        crop = crops[0]
        x1, y1, x2, y2 = (float(crop[name]) for name in ("x1", "y1", "x2", "y2"))
    except (TypeError, KeyError, IndexError, ValueError):
        return None
    if not 0 <= x1 < x2 <= 1 or not 0 <= y1 < y2 <= 1:
        return None
    return {"left": round(x1 * 100, 2), "top": round(y1 * 100, 2), "width": round((x2 - x1) * 100, 2),
            "height": round((y2 - y1) * 100, 2)}


def _thumbs(value: Any, assets: dict) -> list[dict[str, Any]]:
    """Before or after of an image element as [{"url", "label", "crop"}]; url None when no asset."""
    refs = value if isinstance(value, list) else [] if value is None else [value]
    out = []
    for ref in refs:
        crop = None
        if isinstance(ref, dict) and "cropPercentList" in ref:
            crop = _crop_box(ref.get("cropPercentList"))
            ref = {"assetId": ref.get("assetId")}
        asset = assets.get(ref_key(ref))
        label = asset.file_name if asset else (ref.get("assetId") if isinstance(ref, dict) else str(ref))
        out.append({"url": asset.url if asset else None, "label": label, "crop": crop})
    return out


def _image_refs(changes: dict) -> list:
    refs: list = []
    for key, change in changes.items():
        if key in IMAGE_KEYS:
            for value in (change.get("before"), change.get("after")):
                for ref in value if isinstance(value, list) else [value]:
                    refs.append({"assetId": ref.get("assetId")} if isinstance(ref, dict) else ref)
    return refs


def _items(changes: dict, diffs: dict, order: tuple[str, ...], assets: dict) -> list[dict[str, Any]]:
    """One entry per changed element, in the order the page shows the elements."""
    items = []
    for key in sorted(changes, key=lambda k: order.index(k) if k in order else len(order)):
        before, after = changes[key].get("before"), changes[key].get("after")
        if key in TEXT_KEYS:
            pieces = _elide(segments(_text(before), _text(after), diffs.get(key)))
            items.append({"key": key, "kind": "text", "segments": pieces})
        elif key in IMAGE_KEYS:
            items.append({"key": key, "kind": "images", "before": _thumbs(before, assets),
                          "after": _thumbs(after, assets)})
        else:
            items.append({"key": key, "kind": "value", "before": before, "after": after})
    return items


def rework_rounds(task: dict[str, Any]) -> dict[str, Any]:
    """{"current": items of the changes since the last rejection (each element's first `before` and
    last `after`), "events": {rework event id: its items}} for the task page."""
    events = [e for e in task["timeline"] if e["type"] in ("rejected", "rework_submitted")]
    reworks = [e for e in events if e["type"] == "rework_submitted" and (e.get("data") or {}).get("changes")]
    last_rejection = max((i for i, e in enumerate(events) if e["type"] == "rejected"), default=-1)
    current: dict[str, dict] = {}
    diffs: dict[str, Any] = {}
    for event in events[last_rejection + 1:]:
        for key, change in ((event.get("data") or {}).get("changes") or {}).items():
            first = current.get(key, change)
            current[key] = {"before": first.get("before"), "after": change.get("after")}
            diffs[key] = None if key in diffs else (event["data"].get("textDiff") or {}).get(key)
    refs = [ref for changes in [current] + [e["data"]["changes"] for e in reworks] for ref in _image_refs(changes)]
    found = resolve_many(refs)  # one lookup for every image of every round
    assets = {ref_key(ref): found[index] for index, ref in enumerate(refs) if found[index] is not None}
    order = SELECTION_KEYS.get(task["contentType"], ())
    return {"current": _items(current, diffs, order, assets),
            "events": {e["id"]: _items(e["data"]["changes"], e["data"].get("textDiff") or {}, order, assets)
                       for e in reworks}}
