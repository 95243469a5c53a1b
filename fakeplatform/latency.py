"""The fake platform's wait before each answer, as the real one has from a server outside its region."""

import random
import threading
import time
from collections import Counter


class Latency:
    """Mixed into FakePlatform; no wait until set_latency is called."""

    _lock: threading.RLock
    _latency: tuple = (0.0, 0.0, {})  # fixed seconds, jitter seconds, {path suffix: (fixed, jitter)}
    _waiting: Counter = Counter()
    peak_waiting: Counter = Counter()  # path -> most calls to it waiting at once since set_latency

    def set_latency(self, fixed=0.0, jitter=0.0, paths=None):
        """Every API call waits fixed ± jitter seconds before it is handled (calls run side by side, as
        on the real platform); `paths` maps a path suffix to its own (fixed, jitter)."""
        self._latency = (float(fixed), float(jitter), dict(paths or {}))
        self._waiting, self.peak_waiting = Counter(), Counter()

    def _delay(self, path):
        fixed, jitter, paths = self._latency
        for suffix, own in paths.items():
            if path.endswith(suffix):
                fixed, jitter = own
                break
        if not (fixed or jitter):
            return
        with self._lock:
            self._waiting[path] += 1
            self.peak_waiting[path] = max(self.peak_waiting[path], self._waiting[path])
        try:
            time.sleep(max(0.0, fixed + random.uniform(-jitter, jitter)))
        finally:
            with self._lock:
                self._waiting[path] -= 1
