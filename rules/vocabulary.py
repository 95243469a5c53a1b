"""The service's vocabulary (docs/api.md §4): accounts, content types, statuses, actions, keys, events, themes."""

# The two default accounts: WECHAT_ACCOUNTS's default (docs/api.md §18; rules.accounts has the configured ones).
DEFAULT_ACCOUNTS = ("silicon-rise", "carbon-fitness")
CONTENT_TYPES = ("article", "image_post")
STATUSES = ("pending_review", "approved", "published", "rejected_rework")
ACTIONS = ("approve_and_publish", "approve_without_publish", "reject_rework")
APPROVE_ACTIONS = ("approve_and_publish", "approve_without_publish")
REJECTION_REASONS = ("content_quality", "factual_error", "compliance_risk", "style_mismatch", "image_issue", "other")
# Fields that can be rejected or patched as one unit (docs/api.md §4).
ELEMENT_KEYS = {
    "article": ("title", "summary", "body", "bodyImages", "coverImage"),
    "image_post": ("title", "description", "images", "coverCrop", "commentSettings"),
}
ALL_ELEMENT_KEYS = tuple(sorted({key for keys in ELEMENT_KEYS.values() for key in keys}))
# Every key a selections object may hold, and the ones approval needs (docs/api.md §4, OpenAPI `Selections`).
SELECTION_KEYS = {
    "article": ("author", "title", "summary", "body", "bodyImages", "coverImage"),
    "image_post": ("title", "description", "images", "coverCrop", "commentSettings"),
}
REQUIRED_SELECTION_KEYS = {
    "article": ("title", "summary", "body", "coverImage"),
    "image_post": ("title", "description", "images", "coverCrop", "commentSettings"),
}
CANDIDATE_KEYS = {
    "article": ("authors", "titles", "summaries", "bodyOptions", "coverImages", "bodyImageCandidates"),
    "image_post": ("titles", "descriptions", "imageGroups", "commentSettings"),
}
OVERRIDE_KEYS = {
    "article": ("title", "summary", "body", "coverImage", "bodyImages"),
    "image_post": ("title", "description", "images"),
}
# Timeline (docs/api.md §4 Timeline).
EVENT_TYPES = (
    "task_created",
    "draft_saved",
    "rework_submitted",
    "returned_to_review",
    "approved",
    "rejected",
    "publish_succeeded",
    "publish_failed",
    "agent_notified",
    "agent_notification_failed",
    "preview_sent",
    # going live (docs/api.md §18): who asked for it and for when, who cancelled it, what the platform said
    "live_scheduled",
    "live_canceled",
    "live_submitted",
    "live",
    "live_failed",
    # editions (docs/api.md §21): the task's edition was scheduled, sent to followers, or failed
    "edition_scheduled",
    "edition_sent",
    "edition_failed",
    # a decision taken from a card in the team's chat (docs/api.md §22): the platform and the admin
    "decided_in_chat",
    # readers' comments (docs/api.md §23): the agent's proposed reply, and what an editor did
    "comment_reply_proposed",
    "comment_replied",
    "comment_reply_deleted",
    "comment_featured",
    "comment_unfeatured",
    "comment_deleted",
    "comments_opened",
    "comments_closed",
)
PROPOSAL_STATES = ("proposed", "sent", "edited", "discarded")  # an agent's proposed reply (docs/api.md §23)
CHAT_PLATFORMS = ("feishu", "wecom")
ACTORS = ("agent", "admin", "system")
TRIGGER_MODES = ("manual", "auto_after_approval")  # of publish jobs
# Webhooks to the agent (docs/api.md §13): every type is recorded in the outbox; REVIEW_AGENT_WEBHOOK_EVENTS
# chooses which are sent.
WEBHOOK_EVENTS = (
    "review_task.rejected",
    "review_task.approved",
    "review_task.published",
    "review_task.publish_failed",
    "review_task.live",
    "review_task.live_failed",
    "review_task.stats",
    "review_task.comments",
)
DEFAULT_WEBHOOK_EVENTS = ("review_task.rejected",)
# Team notifications (docs/api.md §15): what NOTIFY_EVENTS may choose, and where they go.
TEAM_EVENTS = (
    "task.awaiting_review",
    "task.publish_failed",
    "feedback.received",
    "task.live",
    "task.live_failed",
    "edition.sent",
    "edition.failed",
)
# Going live (docs/api.md §18): a task's article on its way to readers, and where it stands.
LIVE_STATUSES = ("scheduled", "submitting", "publishing", "live", "failed", "canceled")
LIVE_PENDING = ("scheduled", "submitting", "publishing")  # on its way to readers alone
LIVE_TAKEN = (*LIVE_PENDING, "live")  # live or going live: it joins no edition (docs/api.md §21)
# Editions (docs/api.md §21): the day's articles sent to followers as one message.
EDITION_STATUSES = ("draft", "scheduled", "sending", "sent", "failed", "canceled")
EDITION_HOLDS = ("draft", "scheduled", "sending")  # a task in such an edition joins no other (a sent one's are live)
EDITION_QUOTA = ("scheduled", "sending", "sent")  # what counts against the account's mass-send quota
EDITION_ON_ITS_WAY = ("scheduled", "sending")  # its tasks reach readers with it, never alone (docs/api.md §18)
EDITION_MAX_ARTICLES = 8
STATS_PLATFORM_DAYS = 30  # a detail_list runs at most 30 days from the publish day (docs/api.md §19)
COMMENTS_PAGE = 49  # comments a comment/list page asks for: the platform refuses a count of 50 or more


def comment_pages(limit: int) -> int:
    """The most comment/list calls one article's fetch makes for `limit` comments (WECHAT_COMMENTS_MAX): full pages'
    worth, even when the platform answers shorter ones, so the fetch's lease covers them (services.background)."""
    return -(-limit // COMMENTS_PAGE)


LIVE_VIA = ("freepublish", "mass_send")
TEAM_CHANNELS = ("wecom", "feishu", "dingtalk", "email")
# Decisions as data (docs/api.md §20): the dataset export's formats (services/export/dataset.py).
DATASET_FORMATS = ("raw", "sft", "dpo", "trl-dpo", "kto")
# Body themes (docs/api.md §5); services.rendering.themes holds their styles, in this order.
THEME_NAMES = ("default", "tech-blue", "warm-paper")

FEEDBACK_STATUSES = ("unprocessed", "processing", "processed")
PAGE_LANGUAGES = ("zh-CN", "en")  # of the admin pages (docs/api.md §14); the JSON API speaks English
ATTACHMENT_KINDS = ("screenshot", "log_file")
