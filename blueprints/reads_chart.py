"""The reads-per-day chart of a live task (docs/api.md §19): bar geometry for a server-rendered SVG, so
the page needs no script and the figures can be written beside each bar."""

from typing import Any

WIDTH, HEIGHT, TOP, BOTTOM = 340, 150, 18, 22  # viewBox units; the SVG scales to the column's width
MAX_DAYS = 30  # the chart shows the last 30 days; the table under it has every day
LABEL = 56  # room of one day's label (YYYY-MM-DD at 9 units, as every date of the page reads), viewBox units


def reads_chart(days: list[dict[str, Any]]) -> dict[str, Any] | None:
    """{"bars": [{x, y, width, height, value, label, label_x, date, center}], "width", "height", "baseline",
    "label_step"}; None without days."""
    shown = days[-MAX_DAYS:]
    if not shown:
        return None
    peak = max((day["readUser"] or 0) for day in shown) or 1
    slot = WIDTH / len(shown)
    bar = max(2.0, slot * 0.7)
    room = HEIGHT - TOP - BOTTOM
    bars = []
    for index, day in enumerate(shown):
        value = day["readUser"]
        height = round(room * (value or 0) / peak, 1)
        bars.append(
            {
                "x": round(index * slot + (slot - bar) / 2, 1),
                "y": round(TOP + room - height, 1),
                "width": round(bar, 1),
                "height": height,
                "value": value,
                "date": day["date"],
                "label": day["date"],
                "center": round(index * slot + slot / 2, 1),
                "label_x": round(min(max(index * slot + slot / 2, LABEL / 2), WIDTH - LABEL / 2), 1),
            }
        )
    # Dates under every bar while they fit, else under every few; the first and last kept inside the chart.
    step = max(1, -(-len(shown) * LABEL // WIDTH))
    return {"bars": bars, "width": WIDTH, "height": HEIGHT, "baseline": HEIGHT - BOTTOM, "label_step": step}
