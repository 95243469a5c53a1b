"""Settings shared by the benchmark server and the seeding step."""

AGENT_TOKEN = "bench-agent-token-0123456789"
CLIENT_TOKEN = "bench-client-token-0123456789"
ADMIN = ("bench-admin", "bench-password-123")

BENCH_CONFIG = {
    "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
    "FEEDBACK_CLIENT_TOKENS": f"bench={CLIENT_TOKEN}",
    # Limits far above the offered load: the benchmark measures the work, not the limiter's refusals.
    "FEEDBACK_RATE_LIMIT_PER_IP": "1000000/minute",
    "FEEDBACK_RATE_LIMIT_PER_DEVICE": "1000000/minute",
    "FEEDBACK_RATE_LIMIT_PER_VERSION": "1000000/minute",
    "FEEDBACK_RATE_LIMIT_PER_CHANNEL": "1000000/minute",
    "WEBHOOK_SENDER_ENABLED": False,
    "TEAM_MESSAGES_ENABLED": False,
    "CHAT_CARDS_ENABLED": False,
}
