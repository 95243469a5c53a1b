"""The feedback intake's limiter (docs/api.md §9): the four FEEDBACK_RATE_LIMIT_* settings."""

from services.ratelimit import SlidingWindowLimiter
from services.settings import Settings


def limiter_from_settings(settings: Settings) -> "SlidingWindowLimiter":
    """The four FEEDBACK_RATE_LIMIT_* settings (parsed and checked at start) -> a limiter."""
    return SlidingWindowLimiter(settings.feedback_rate_limits)
