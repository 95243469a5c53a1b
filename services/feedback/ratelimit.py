"""Sliding-window rate limits for feedback intake (CONTRACT §9), one limiter per app instance.

Each category (ip, device, version, channel) has limits such as `20/minute;200/day`. A request is
checked against every key it carries and recorded against all of them only when none is over its
limit, so a client that waits the announced Retry-After gets through. State is in memory: good for
one process (waitress threads); several processes would each count on their own.
"""
import math
import threading
import time
from bisect import bisect_right

from services.settings import Settings

SWEEP_EVERY = 1000  # hits between purges of idle keys


class SlidingWindowLimiter:
    """`rules` maps a category to [(count, period_seconds), ...]; thread-safe."""

    def __init__(self, rules, clock=time.monotonic):
        self.rules = {category: list(limits) for category, limits in rules.items() if limits}
        self.clock = clock
        self._stamps = {}  # (category, key) -> ascending hit times within the longest period
        self._lock = threading.Lock()
        self._hits_since_sweep = 0

    def hit(self, keys: dict[str, str | None]) -> int | None:
        """Record one request against `keys` ({category: key or None}).

        Returns None when allowed, else the whole seconds (>= 1) until every exceeded limit has room.
        """
        with self._lock:
            now = self.clock()
            wait = 0.0
            checked = []
            for category, key in keys.items():
                limits = self.rules.get(category)
                if key is None or not limits:
                    continue
                stamps = self._window(category, key, now)
                for count, period in limits:
                    inside = len(stamps) - bisect_right(stamps, now - period)
                    if inside >= count:
                        # The hit that has to leave the window before one more fits.
                        wait = max(wait, stamps[len(stamps) - count] + period - now)
                checked.append(stamps)
            if wait > 0:
                return max(1, math.ceil(wait))
            for stamps in checked:
                stamps.append(now)
            self._sweep_now_and_then(now)
            return None

    def _window(self, category, key, now):
        longest = max(period for _count, period in self.rules[category])
        stamps = self._stamps.setdefault((category, key), [])
        expired = bisect_right(stamps, now - longest)
        if expired:
            del stamps[:expired]
        return stamps

    def _sweep_now_and_then(self, now):
        """Forget keys with no hit inside their longest period, so memory follows active clients."""
        self._hits_since_sweep += 1
        if self._hits_since_sweep < SWEEP_EVERY:
            return
        self._hits_since_sweep = 0
        for (category, key), stamps in list(self._stamps.items()):
            longest = max(period for _count, period in self.rules[category])
            if not stamps or stamps[-1] <= now - longest:
                del self._stamps[(category, key)]

    def tracked_keys(self) -> int:
        return len(self._stamps)


def limiter_from_settings(settings: Settings) -> "SlidingWindowLimiter":
    """The four FEEDBACK_RATE_LIMIT_* settings (parsed and checked at start) -> a limiter."""
    return SlidingWindowLimiter(settings.feedback_rate_limits)
