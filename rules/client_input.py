"""Rules for raw client input that several parsers share (docs/api.md §2): JSON bodies, ISO dates.

Every failure is a ValueError whose text is fit for a person; callers turn it into their 400.
"""

import json
import math
import re
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import SplitResult, urlsplit

# ---- JSON bodies ---------------------------------------------------------------------------------
# \ud800-\udfff or NUL written as an escape (JSON writes them no other way). A false hit (an escaped
# backslash before "ud8…") only costs the walk.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")
_SURROGATE = re.compile("[\ud800-\udfff]")


class TextRefused(ValueError):
    """A string the service cannot store (a NUL, a lone surrogate); `path` is where it is, dotted."""

    def __init__(self, message, path):
        super().__init__(message)
        self.path = path


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite(text):
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"the number {text[:24]} is too large")
    return number


# Built once: json.loads with any option builds a new decoder on every call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
# Objects and arrays nested deeper are refused: no body of this service or answer of a platform comes near,
# and a value the decoder just managed (up to Python's recursion limit) would fail later, deeper in a
# request's stack, when it is validated, stored or written out (a 500).
MAX_DEPTH = 64
TOO_DEEP = f"the JSON document is nested too deeply (more than {MAX_DEPTH} levels)"


def load_json(raw):
    """Bytes or text of a JSON document -> its value.

    Stricter than json.loads wherever it would let through what JSON cannot carry or storage cannot
    bind: NaN and Infinity, numbers overflowing to infinity, unpaired UTF-16 surrogates, NUL (PostgreSQL's
    text holds none), nesting past MAX_DEPTH.
    """
    if isinstance(raw, (bytes, bytearray)):
        # Strict, unlike json.loads (surrogatepass): a surrogate encoded in the bytes fails here.
        encoding = json.detect_encoding(raw)
        try:
            raw = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(f"invalid {encoding} text at byte {exc.start} ({exc.reason})") from None
    try:
        value = _DECODER.decode(raw)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if raw.count("[") + raw.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):  # few brackets: no walk
        raise ValueError(TOO_DEEP)
    # Decoding kept pairs together, so a surrogate left in a string came from an unpaired escape.
    # Bodies without such an escape (nearly all) skip the walk.
    if _UNSTORABLE_ESCAPE.search(raw):
        _refuse_unstorable(value)
    return value


def _deeper_than(value, limit):
    """Whether objects and arrays in `value` nest more than `limit` levels: walked without recursion, holding
    an iterator per level (not an entry per container: a 2 MiB body of `[]`s walked in about its decoding's
    time)."""
    levels = [iter((value,))]
    while levels:
        for item in levels[-1]:
            if isinstance(item, (dict, list)):
                if len(levels) > limit:
                    return True
                levels.append(iter(item.values() if isinstance(item, dict) else item))
                break
        else:
            levels.pop()
    return False


def _refuse_unstorable(value):
    """ValueError naming (dotted path) the first string or key holding a lone surrogate or a NUL."""
    pending = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            _refuse_text(item, path or "the body", path or "_body")
        elif isinstance(item, dict):
            for key, child in item.items():
                _refuse_text(key, f"a key of {path or 'the body'}", path or "_body")
                pending.append((f"{path}.{key}" if path else key, child))
        elif isinstance(item, list):
            pending.extend((f"{path}.{index}" if path else str(index), child) for index, child in enumerate(item))


def _refuse_text(text, where, path):
    if "\x00" in text:
        raise TextRefused(f"NUL (\\u0000) in {where}: text cannot hold it", path)
    if found := _SURROGATE.search(text):
        raise TextRefused(
            f"unpaired surrogate \\u{ord(found.group()):04x} in {where}; "
            "a \\ud800-\\udfff escape must be half of a pair",
            path,
        )


# ---- dates ---------------------------------------------------------------------------------------
# A day's margin at both ends: no offset (< 24 h) and no end-of-day step leaves datetime's calendar.
FIRST_DAY, LAST_DAY = date(1, 1, 2), date(9999, 12, 30)
MOMENT_HINT = "must be an ISO 8601 date-time such as 2026-11-21T13:34:00Z"
BOUND_HINT = "must be an ISO date (2026-11-21) or date-time (2026-11-21T13:34:00Z)"


def whole_number(text: str, longest: int = 18) -> int | None:
    """`text` as a number when it is 1 to `longest` ASCII digits, else None: str.isdigit takes "²" and "①",
    which int refuses, and int refuses thousands of digits."""
    return int(text) if 0 < len(text) <= longest and text.isascii() and text.isdigit() else None


def url_parts(text: str) -> SplitResult | None:
    """urlsplit(text), or None for a URL it cannot read (a broken IPv6 host such as `http://[::1`, a port that
    is not a number): a header or field from outside must never make that a 500."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  # read: a bad port fails here, not later
    except ValueError:
        return None
    return parts


def _in_range(day):
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValueError(f"must be between {FIRST_DAY} and {LAST_DAY}")


def moment(text, hint=MOMENT_HINT):
    """ISO 8601 date-time -> aware UTC datetime; a missing offset means UTC."""
    try:
        value = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise ValueError(hint) from None
    _in_range(value.date())
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def bound(text, *, end=False):
    """A list filter's `from`, or with end=True its `to` as an exclusive UTC datetime.

    A date-only `to` covers its whole day; a date-time `to` its millisecond (timestamps are stored in ms).
    """
    text = text.strip()
    if "T" in text.upper() or " " in text:
        start, step = moment(text, BOUND_HINT), timedelta(milliseconds=1)
    else:
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ValueError(BOUND_HINT) from None
        _in_range(day)
        start, step = datetime.combine(day, time(), UTC), timedelta(days=1)
    return start + step if end else start
