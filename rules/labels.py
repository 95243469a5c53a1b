"""The words people see for the vocabulary's codes (docs/api.md §14: codes appear as words of the page's
language), written once for pages, scripts, robots and e-mail (§20: one term per meaning).

Lazy: each label is looked up in the gettext catalogue (translations/, docs/conventions.md) of the
language in force where it is shown: a page's, or a team message's (services/team/words.py). A code
missing from a table (a feedback type added to FEEDBACK_TYPES, say) is shown as it is. One English word
with two meanings gets a context each: "Account" alone is a WeChat account, the feedback type `account`
an app user's.
"""
from pathlib import Path

from flask_babel import lazy_gettext as _l
from flask_babel import lazy_pgettext as _p

TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"  # the compiled catalogues (committed)
LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}  # a page language -> Babel's locale name (translations/<name>/)

STATUS_LABELS = {"all": _l("All"), "pending_review": _l("Pending review"), "approved": _l("Approved"),
                 "published": _l("Draft ready"), "rejected_rework": _l("Rejected for rework")}
# What readers did (docs/api.md §19), by the API's keys.
FIGURE_LABELS = {"readUser": _l("Reads"), "shareUser": _l("Shares"), "likeUser": _l("Likes"),
                 "zaikanUser": _l("Wows"), "collectionUser": _l("Saves"), "commentCount": _l("Comments")}
# Where the article stands on its way to readers (docs/api.md §18): a draft being ready is not "published".
LIVE_LABELS = {"scheduled": _l("Scheduled for readers"), "submitting": _l("Submitting to WeChat"),
               "publishing": _l("Publishing to readers"), "live": _l("Live"), "failed": _l("Going live failed"),
               "canceled": _l("Schedule canceled")}
FEEDBACK_LABELS = {"all": _l("All"), "unprocessed": _l("Unprocessed"), "processing": _l("Processing"),
                   "processed": _l("Processed")}
FEEDBACK_TYPE_LABELS = {"bug": _l("Bug"), "suggestion": _l("Suggestion"), "content": _p("feedback type", "Content"),
                        "account": _p("feedback type: the app user's account", "Account"), "other": _l("Other")}
REASON_LABELS = {"content_quality": _l("Content quality"), "factual_error": _l("Factual error"),
                 "compliance_risk": _l("Compliance risk"), "style_mismatch": _l("Style mismatch"),
                 "image_issue": _l("Image issue"), "other": _l("Other")}
ELEMENT_LABELS = {"title": _l("Title"), "summary": _l("Summary"), "author": _l("Author"), "body": _l("Body"),
                  "bodyImages": _l("Body images"), "coverImage": _l("Cover image"),
                  "description": _l("Description"), "images": _l("Images"), "coverCrop": _l("Cover crop"),
                  "commentSettings": _l("Comment settings")}
CONTENT_TYPE_LABELS = {"article": _l("Article"), "image_post": _l("Image post")}
THEME_LABELS = {"default": _l("Default"), "tech-blue": _l("Tech blue"), "warm-paper": _l("Warm paper")}
JOB_STATUS_LABELS = {"running": _l("Running"), "succeeded": _l("Succeeded"), "failed": _l("Failed")}
TRIGGER_LABELS = {"manual": _l("Manual"), "auto_after_approval": _l("After approval")}
ATTACHMENT_LABELS = {"screenshot": _l("Screenshot"), "log_file": _l("Log file")}
ACTOR_LABELS = {"agent": _l("the agent"), "admin": _l("an administrator"), "system": _l("the system")}
EVENT_LABELS = {
    "task_created": _l("Task created"), "draft_saved": _l("Draft saved"), "rework_submitted": _l("Rework submitted"),
    "returned_to_review": _l("Returned to review"), "approved": _l("Approved"), "rejected": _l("Rejected for rework"),
    "publish_succeeded": _l("Platform draft ready"), "publish_failed": _l("Publish failed"),
    "agent_notified": _l("Agent notified"), "agent_notification_failed": _l("Agent notification failed"),
    "preview_sent": _l("Preview sent to a phone"),
}
ACTION_LABELS = {"approve_and_publish": _l("Approve and publish"),
                 "approve_without_publish": _l("Approve without publishing"), "reject_rework": _l("Reject for rework")}
# Keys of a timeline event's data (services write them); a key missing here is shown as it is.
EVENT_DATA_LABELS = {
    "contentType": _l("Type"), "publicAccount": _l("Account"), "action": _l("Decision"),
    "rejectionReason": _l("Reason"), "rejectedElements": _l("Fields to rework"), "rejectionNote": _l("Note"),
    "fields": _l("Fields"), "remainingElements": _l("Still to rework"), "jobId": _l("Job"),
    "retryOf": _l("Retry of"), "draftMediaId": _l("Draft"), "lastError": _l("Error"), "to": _l("Recipient"),
    "triggerMode": _l("Trigger"), "attempt": _l("Attempt"), "attemptCount": _l("Attempt"),
    "messageId": _l("Message"), "eventType": _l("Event"), "error": _l("Error"), "willRetry": _l("Will retry"),
}
# Data values that are codes, by key: shown through these tables.
EVENT_DATA_VALUES = {"contentType": CONTENT_TYPE_LABELS, "rejectionReason": REASON_LABELS, "action": ACTION_LABELS,
                     "rejectedElements": ELEMENT_LABELS, "fields": ELEMENT_LABELS, "remainingElements": ELEMENT_LABELS,
                     "triggerMode": TRIGGER_LABELS}
