"""Sliding-window rate limits counted in the database (docs/decisions.md "Feedback"): feedback intake
(docs/api.md §9), phone previews (§16) and body previews (§14). Each category (feedback: ip, device, version,
channel; preview: task; body_preview: admin) has limits such as `20/minute;200/day`.
"""

import math
import time
from collections.abc import Callable

from models import immediate
from models.ratelimit import RateHit
from rules.limits import BODY_PREVIEW_WINDOW_SECONDS, BODY_PREVIEWS_PER_ADMIN
from services.errors import RateLimited

SWEEP_EVERY = 1000  # hits (per process) between purges of hits older than every window


class SlidingWindowLimiter:
    """`rules` maps a category to [(count, period_seconds), ...]; `clock` gives Unix seconds."""

    def __init__(self, rules: dict, clock: Callable[[], float] = time.time):
        self.rules = {category: list(limits) for category, limits in rules.items() if limits}
        self.clock = clock
        self._hits_since_sweep = 0

    def hit(self, keys: dict[str, str | None]) -> int | None:
        """Record one request against `keys` ({category: key or None}), and against all of them only when
        none is over its limit. None when allowed, else the whole seconds (>= 1) until every exceeded limit
        has room."""
        counted = [(category, key) for category, key in keys.items() if key is not None and self.rules.get(category)]
        if not counted:
            return None
        with immediate():  # one writer at a time, across processes: no two requests take the last slot
            now = self.clock()
            wait = 0.0
            for category, key in counted:
                limits = self.rules[category]
                longest = max(period for _count, period in limits)
                stamps: list[float] = [
                    hit.at
                    for hit in RateHit.select(RateHit.at)
                    .where((RateHit.category == category) & (RateHit.key == key) & (RateHit.at > now - longest))
                    .order_by(RateHit.at)
                ]
                for count, period in limits:
                    inside = sum(1 for at in stamps if at > now - period)
                    if inside >= count:
                        # The hit that has to leave the window before one more fits.
                        wait = max(wait, stamps[len(stamps) - count] + period - now)
            if wait > 0:
                return max(1, math.ceil(wait))
            RateHit.insert_many([{"category": category, "key": key, "at": now} for category, key in counted]).execute()
            self._sweep_now_and_then(now)
        return None

    def _sweep_now_and_then(self, now: float) -> None:
        """Delete hits outside every window, so the table follows active clients."""
        self._hits_since_sweep += 1
        if self._hits_since_sweep < SWEEP_EVERY:
            return
        self._hits_since_sweep = 0
        for category, limits in self.rules.items():
            longest = max(period for _count, period in limits)
            RateHit.delete().where((RateHit.category == category) & (RateHit.at <= now - longest)).execute()

    def tracked_keys(self) -> int:
        return RateHit.select(RateHit.category, RateHit.key).distinct().count()


_BODY_PREVIEWS = SlidingWindowLimiter({"body_preview": [(BODY_PREVIEWS_PER_ADMIN, BODY_PREVIEW_WINDOW_SECONDS)]})


def admit_body_preview(admin: str) -> None:
    """At most BODY_PREVIEWS_PER_ADMIN body previews a minute per admin, else 429 (docs/api.md §14)."""
    wait = _BODY_PREVIEWS.hit({"body_preview": admin})
    if wait is not None:
        raise RateLimited(
            f"at most {BODY_PREVIEWS_PER_ADMIN} body previews a minute per admin; wait {wait} seconds", wait
        )
