"""What the agent changed since the rejection: record() computes a rework PATCH's `changes` and `textDiff`
once, rework_rounds() is what the task page shows. The bounded diff: docs/api.md §15 ("What changed since the
rejection", "The rework diff is bounded"); content is never turned into markup here.
"""

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from rules.limits import DIFF_CHAR_PAIRS, DIFF_STEPS
from rules.vocabulary import SELECTION_KEYS
from services.asset_refs import REF_FIELDS, ref_key, resolve_many

TEXT_KEYS = ("author", "title", "summary", "body", "description")
IMAGE_KEYS = (*REF_FIELDS, "coverCrop")
CONTEXT = 80  # unchanged characters kept on each side of a change in a long text
POPULAR_FROM = 200  # lines: from this many on, a line making up over 1% of them is "popular" (as difflib)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _push(out: list, op: str, length: int) -> None:
    if length <= 0:
        return
    if out and out[-1][0] == op:
        out[-1][1] += length
    else:
        out.append([op, length])


class TooLarge(Exception):
    """The comparison would take more than its budget of steps."""


class _Budget:
    def __init__(self, steps: int):
        self.left = steps

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise TooLarge


def _common_ends(a: Sequence, b: Sequence) -> tuple[int, int]:
    """Lengths of the common head and the common tail (not overlapping), by halving: slices are compared
    in C, so a long text costs a few passes over it, not a Python loop per item."""

    def common_head(x: Sequence, y: Sequence) -> int:
        low, high = 0, min(len(x), len(y))
        while low < high:
            middle = (low + high + 1) // 2
            if x[:middle] == y[:middle]:
                low = middle
            else:
                high = middle - 1
        return low

    head = common_head(a, b)
    tail = common_head(a[head:][::-1], b[head:][::-1])
    return head, tail


def _longest(a: Sequence, b: Sequence, b2j: dict, span: tuple[int, int, int, int], budget: _Budget):
    """difflib.SequenceMatcher.find_longest_match (no junk; `b2j` without the popular items), each
    candidate pair counted against the budget. The indices of an item in b are sorted, so the ones
    inside the span are found by bisection instead of walking past those before it."""
    alo, ahi, blo, bhi = span
    besti, bestj, bestsize = alo, blo, 0
    j2len: dict[int, int] = {}
    for i in range(alo, ahi):
        found = b2j.get(a[i], ())
        first = bisect_left(found, blo)
        last = bisect_left(found, bhi, first)
        budget.spend(last - first + 1)
        lengths = {}
        for j in found[first:last]:
            k = lengths[j] = j2len.get(j - 1, 0) + 1
            if k > bestsize:
                besti, bestj, bestsize = i - k + 1, j - k + 1, k
        j2len = lengths
    # Popular items are not in b2j: the match grows over them on both sides.
    while besti > alo and bestj > blo and a[besti - 1] == b[bestj - 1]:
        besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
    while besti + bestsize < ahi and bestj + bestsize < bhi and a[besti + bestsize] == b[bestj + bestsize]:
        bestsize += 1
    budget.spend(bestsize)
    return besti, bestj, bestsize


def matching_blocks(a: Sequence, b: Sequence, budget: _Budget, *, popular: bool = False) -> list[tuple[int, int, int]]:
    """difflib.SequenceMatcher(None, a, b, autojunk=popular).get_matching_blocks() without its final
    (len(a), len(b), 0); raises TooLarge past the budget."""
    b2j: dict[Any, list[int]] = {}
    for j, item in enumerate(b):
        b2j.setdefault(item, []).append(j)
    budget.spend(len(b) + 1)
    if popular and len(b) >= POPULAR_FROM:
        most = len(b) // 100 + 1
        b2j = {item: found for item, found in b2j.items() if len(found) <= most}
    queue, found = [(0, len(a), 0, len(b))], []
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = match = _longest(a, b, b2j, (alo, ahi, blo, bhi), budget)
        if k:
            found.append(match)
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    blocks: list[tuple[int, int, int]] = []
    for i, j, k in found:  # adjacent blocks become one
        if blocks and blocks[-1][0] + blocks[-1][2] == i and blocks[-1][1] + blocks[-1][2] == j:
            blocks[-1] = (blocks[-1][0], blocks[-1][1], blocks[-1][2] + k)
        else:
            blocks.append((i, j, k))
    return blocks


def _char_ops(before: str, after: str, out: list, budget: _Budget) -> None:
    """A changed block of lines, by character: the common ends first (cheap), then the rest as
    difflib would; a rest of more than DIFF_CHAR_PAIRS character pairs is one removal and one addition."""
    head, tail = _common_ends(before, after)
    _push(out, "=", head)
    before, after = before[head : len(before) - tail], after[head : len(after) - tail]
    if len(before) * len(after) > DIFF_CHAR_PAIRS:
        _push(out, "-", len(before))
        _push(out, "+", len(after))
    else:
        i = j = 0
        for i2, j2, k in [*matching_blocks(before, after, budget), (len(before), len(after), 0)]:
            _push(out, "-", i2 - i)
            _push(out, "+", j2 - j)
            _push(out, "=", k)
            i, j = i2 + k, j2 + k
    _push(out, "=", tail)


def text_ops(before: str, after: str, steps: int = DIFF_STEPS) -> list[list] | None:
    """[[op, length], ...] with op "=" (kept), "-" (removed from before), "+" (added in after); None when
    the texts are too large to compare within `steps`. Lines first, then characters inside each changed block
    (docs/api.md §15): a long body costs the size of its changes, not the square of its length."""
    budget = _Budget(steps)
    out: list = []
    lines_a, lines_b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head, tail = _common_ends(lines_a, lines_b)
    _push(out, "=", sum(map(len, lines_a[:head])))
    lines_a, rest_a = lines_a[head : len(lines_a) - tail], lines_a[len(lines_a) - tail :]
    lines_b = lines_b[head : len(lines_b) - tail]
    try:
        i = j = 0
        for i2, j2, k in [*matching_blocks(lines_a, lines_b, budget, popular=True), (len(lines_a), len(lines_b), 0)]:
            if i < i2 or j < j2:
                _char_ops("".join(lines_a[i:i2]), "".join(lines_b[j:j2]), out, budget)
            _push(out, "=", sum(map(len, lines_a[i2 : i2 + k])))
            i, j = i2 + k, j2 + k
    except TooLarge:
        return None
    _push(out, "=", sum(map(len, rest_a)))
    return out


def segments(before: str, after: str, ops: list | None = None) -> list[tuple[str, str]] | None:
    """(op, text) pieces of the diff; stored `ops` that do not fit the texts are computed again. None
    when the texts are too large to compare."""
    if (
        ops is None
        or sum(n for op, n in ops if op != "+") != len(before)
        or sum(n for op, n in ops if op != "-") != len(after)
    ):
        ops = text_ops(before, after)
        if ops is None:
            return None
    out, i, j = [], 0, 0
    for op, length in ops:
        if op == "+":
            out.append(("+", after[j : j + length]))
            j += length
        else:
            out.append((op, before[i : i + length]))
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
    changes = {
        key: {"before": selections.get(key), "after": value}
        for key, value in values.items()
        if selections.get(key) != value
    }
    diffs = {
        key: text_ops(_text(change["before"]), _text(change["after"]))  # None: too large to compare
        for key, change in changes.items()
        if key in TEXT_KEYS
    }
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
    return {
        "left": round(x1 * 100, 2),
        "top": round(y1 * 100, 2),
        "width": round((x2 - x1) * 100, 2),
        "height": round((y2 - y1) * 100, 2),
    }


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
            # A stored null: too large to compare when recorded, so not tried again on each view.
            pieces = (
                None if key in diffs and diffs[key] is None else segments(_text(before), _text(after), diffs.get(key))
            )
            if pieces is None:
                items.append(
                    {"key": key, "kind": "too_large", "before": len(_text(before)), "after": len(_text(after))}
                )
            else:
                items.append({"key": key, "kind": "text", "segments": _elide(pieces)})
        elif key in IMAGE_KEYS:
            items.append(
                {"key": key, "kind": "images", "before": _thumbs(before, assets), "after": _thumbs(after, assets)}
            )
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
    for event in events[last_rejection + 1 :]:
        for key, change in ((event.get("data") or {}).get("changes") or {}).items():
            first = current.get(key, change)
            if key in current:  # changed again: the stored diffs do not span the round, computed on view
                diffs.pop(key, None)
            else:
                stored = event["data"].get("textDiff") or {}
                if key in stored:
                    diffs[key] = stored[key]
            current[key] = {"before": first.get("before"), "after": change.get("after")}
    refs = [ref for changes in [current] + [e["data"]["changes"] for e in reworks] for ref in _image_refs(changes)]
    found = resolve_many(refs)  # one lookup for every image of every round
    assets = {ref_key(ref): found[index] for index, ref in enumerate(refs) if found[index] is not None}
    order = SELECTION_KEYS.get(task["contentType"], ())
    return {
        "current": _items(current, diffs, order, assets),
        "events": {
            e["id"]: _items(e["data"]["changes"], e["data"].get("textDiff") or {}, order, assets) for e in reworks
        },
    }
