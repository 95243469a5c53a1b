"""CSV export of feedback list items (GET /api/feedbacks/export.csv; docs/decisions.md "Feedback"): a BOM so
Excel shows Chinese text, and a leading apostrophe on cells a spreadsheet would run as a formula.
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

BOM = "\ufeff"
EXCEL_CELL_LIMIT = 32_000  # Excel refuses cells over 32,767 characters
ROWS_PER_CHUNK = 200  # rows written before a chunk of the CSV is handed on
COLUMNS = (
    "feedbackNo",
    "id",
    "createdAt",
    "status",
    "type",
    "channel",
    "title",
    "content",
    "appName",
    "appVersion",
    "platform",
    "userId",
    "contactEmail",
    "contactWechat",
    "buildNumber",
    "deviceModel",
    "osVersion",
    "deviceId",
    "pagePath",
    "occurredAt",
    "attachmentCount",
    "adminNote",
    "processedAt",
    "processedBy",
    "updatedAt",
    "extra",
    "logText",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = str(value)
    if len(text) > EXCEL_CELL_LIMIT:
        text = text[:EXCEL_CELL_LIMIT] + "…[truncated]"
    if text.startswith(_FORMULA_START):
        text = "'" + text
    return text


def csv_chunks(items: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Yield the CSV document as text chunks: BOM + header first, then rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    buffer.write(BOM)
    writer.writerow(COLUMNS)
    pending = 0
    for item in items:
        writer.writerow([cell(item.get(column)) for column in COLUMNS])
        pending += 1
        if pending >= ROWS_PER_CHUNK:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    yield buffer.getvalue()
