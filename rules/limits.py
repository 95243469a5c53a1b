"""Every limit a client or reviewer can meet, in one place; messages and docs are built from these.

Sizes are characters unless the name says BYTES or PIXELS.
"""

# Task content (docs/api.md §4).
MAX_LIST = 50  # entries in any candidate list
MAX_CONTENT = 200_000  # a Markdown body or an override value
MAX_TEXT = 2000  # a description, a note, a label
MAX_TOPIC = 500
MAX_URL = 2048
MAX_ID = 128  # client-chosen ids: body options, image groups, placeholders
TITLE_MAX = 64
# The platform's documents give a title 32 characters since 2025-12, while its API still takes TITLE_MAX:
# the page warns past it, and a 45003 names it (docs/api.md §5 "Titles").
PLATFORM_TITLE_CHARS = 32
# A summary may be longer while it is being worked on; approval holds the 100-character limit (docs/api.md §4).
PATCH_SUMMARY_MAX = 120
APPROVAL_SUMMARY_MAX = 100
COMMENT_REPLY_MAX = 1000  # characters of a reply to a reader, proposed or sent (docs/api.md §23)
# The platform refuses longer authors (errcode 45110); an approved task can no longer be edited and
# its failed publish only retries, so approval holds the platform's limit.
APPROVAL_AUTHOR_MAX = 16
MAX_IMAGES = 20  # images of an image post
CREATE_MAX_BYTES = 2 * 1024 * 1024  # one task-creation body
IDEMPOTENCY_KEY_MAX = 128
IDEMPOTENCY_HOURS = 24  # how long a creation answer is replayed for its key
# Where content came from (docs/api.md §20): the agent's prompt and model, stored with the task.
MAX_PROMPT = 20_000
MAX_MODEL = 200
MAX_DATASET_TOOL_LINES = 1000  # lines the MCP tool export_dataset returns at most

# Images (assets, feedback screenshots, archive checks).
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_PIXELS = 40_000_000  # width x height; checked from the header, before any pixel is decoded

# Feedback (docs/api.md §9).
SCREENSHOT_MAX_BYTES = 10 * 1024 * 1024
LOG_MAX_BYTES = 20 * 1024 * 1024
MAX_ATTACHMENTS = 10  # per feedback record
MAX_EXTRA_BYTES = 4096  # the `extra` object, as JSON

# Request bodies (docs/api.md §16): the largest legitimate one is the largest file in its multipart form;
# the server refuses a body declared larger (413) before reading it.
LOGIN_MAX_BYTES = 16 * 1024  # a sign-in: a name, a password and `next`, read before anyone is known
MULTIPART_OVERHEAD = 64 * 1024  # boundaries, part headers and the form's text fields
MAX_REQUEST_BODY_BYTES = max(MAX_UPLOAD_BYTES, SCREENSHOT_MAX_BYTES, LOG_MAX_BYTES) + MULTIPART_OVERHEAD

# Lists.
MAX_PAGE_SIZE = 100


def mib(size: int) -> str:
    """10485760 -> '10 MiB' for messages."""
    return f"{size // (1024 * 1024)} MiB"


def duration(seconds: float) -> str:
    """86400 -> '24 hours', 90 -> '90 seconds' for messages."""
    for unit, length in (("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= length and seconds % length == 0:
            count = int(seconds // length)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:g} seconds"


# Phone previews (docs/api.md §16): each one is a message on a reviewer's phone and a platform call.
PREVIEWS_PER_TASK = 10
PREVIEW_WINDOW_SECONDS = 60
# WeChat IDs and openids as the platform makes them: letters, digits, "_" and "-" (no spaces or controls).
WECHAT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"

# The rework diff (docs/api.md §15): computed before the write lock, and bounded. Steps are the
# candidate pairs the matcher looks at (about 0.1 µs each): past them a text is "too large to compare";
# a changed block of more character pairs than DIFF_CHAR_PAIRS is one removal and one addition.
DIFF_STEPS = 3_000_000
DIFF_CHAR_PAIRS = 4_000_000

# Rendering (docs/api.md §14): a wider GFM table is shown as text.
MAX_TABLE_COLUMNS = 64
# A body longer than this (characters) is rendered when the reviewer asks, not with the task page, so an
# agent's pathological Markdown never holds the page (docs/api.md §14).
RENDER_INLINE_CHARS = 30_000
# Body previews (POST /api/review/preview, docs/api.md §14), per admin.
BODY_PREVIEWS_PER_ADMIN = 120
BODY_PREVIEW_WINDOW_SECONDS = 60
