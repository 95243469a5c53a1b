"""The words people see for the vocabulary's codes (docs/api.md §14: codes appear as words of the page's
language, one term per meaning), looked up lazily in the gettext catalogue (translations/, docs/conventions.md)
of the language in force where shown. A code missing from a table is shown as it is.
"""

from pathlib import Path

from flask_babel import lazy_gettext as _l
from flask_babel import lazy_pgettext as _p

TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"  # the compiled catalogues (committed)
LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}  # a page language -> Babel's locale name (translations/<name>/)

STATUS_LABELS = {
    "all": _l("All"),
    "pending_review": _l("Pending review"),
    "approved": _l("Approved"),
    "published": _l("Draft ready"),
    "rejected_rework": _l("Rejected for rework"),
}
# What readers did (docs/api.md §19), by the API's keys.
FIGURE_LABELS = {
    "readUser": _l("Reads"),
    "shareUser": _l("Shares"),
    "likeUser": _l("Likes"),
    "zaikanUser": _l("Wows"),
    "collectionUser": _l("Saves"),
    "commentCount": _l("Comments"),
}
# Where the article stands on its way to readers (docs/api.md §18): a draft being ready is not "published".
LIVE_LABELS = {
    "scheduled": _l("Scheduled for readers"),
    "submitting": _l("Submitting to WeChat"),
    "publishing": _l("Publishing to readers"),
    "live": _l("Live"),
    "failed": _l("Going live failed"),
    "canceled": _l("Schedule canceled"),
}
# Why going live failed (docs/api.md §18), by the reason's code: the API's failReason is the English, pages
# and robots say it in their language. `error` is the call's own failure, as the client reported it.
LIVE_FAILURE_LABELS = {
    "publish_status_2": _l("the original-content declaration failed (publish_status 2)"),
    "publish_status_3": _l("the platform reported a general failure (publish_status 3)"),
    "publish_status_4": _l("refused by the platform's review (publish_status 4)"),
    "publish_status_5": _l("deleted by the account (publish_status 5)"),
    "publish_status_6": _l("banned by the platform (publish_status 6)"),
    "errcode_48001": _l(
        "the account may not publish through the API: freepublish needs a verified account (platform error 48001)"
    ),
    "errcode_53503": _l("the draft failed the platform's check before publishing (platform error 53503)"),
    "errcode_53504": _l("the platform asks for this draft to be published in its back office (platform error 53504)"),
    "errcode_53505": _l("the platform asks for this draft to be published in its back office (platform error 53505)"),
    "uncertain": _l(
        "the service stopped while submitting this article, so it may have been submitted: check the "
        "back office's publish records before going live again"
    ),
    "not_sent": _l(
        "the submission could not be sent (%(error)s); nothing reached the platform, so going live may be asked again"
    ),
    "no_answer": _l(
        "the submission got no answer (%(error)s), so it may have been submitted: check the back "
        "office's publish records before going live again"
    ),
    "no_result": _l(
        "the platform gave no result within 24 hours of the submission: check the back office's publish records"
    ),
}
# Why a publish job's draft/add or draft/update was refused (docs/api.md §5), by the platform's errcode: the
# job's lastError is the English, with the account's setting or the title and the platform's limit in it.
PUBLISH_FAILURE_LABELS = {
    "errcode_88000": _l(
        "this account cannot open comments: the platform refused comments on (platform error 88000); set "
        "%(setting)s=false to send its image posts with comments off, then retry"
    ),
    "errcode_45003": _l(
        'the platform refused the title "%(title)s" (%(length)d characters): its documents give a '
        "title at most %(limit)d characters (platform error 45003)"
    ),
}


def publish_failure(code: str, **values: object) -> str:
    """A refused draft's sentence in the language in force ("" for a code not in the table)."""
    label = PUBLISH_FAILURE_LABELS.get(code)
    return str(label) % values if label is not None else ""


# Why an edition's mass send failed (docs/api.md §21): the platform's err(N) and errcodes.
EDITION_FAILURE_LABELS = {
    "err(10001)": _l("the platform judged it advertising (err 10001)"),
    "err(20001)": _l("the platform judged it political content (err 20001)"),
    "err(20002)": _l("the platform judged it pornographic (err 20002)"),
    "err(20004)": _l("the platform judged it harmful to society (err 20004)"),
    "err(20006)": _l("the platform judged it criminal content (err 20006)"),
    "err(20008)": _l("the platform judged it fraud (err 20008)"),
    "err(20013)": _l("the platform found a copyright violation (err 20013)"),
    "err(21000)": _l("the platform refused it for other reasons (err 21000)"),
    "err(22000)": _l("the platform judged it mutual promotion (err 22000)"),
    "err(30001)": _l("the originality check failed, and the send was set to stop if judged a reprint (err 30001)"),
    "err(30002)": _l("the originality check did not allow the send (err 30002)"),
    "err(30003)": _l("the originality check judged it a reprint, and the send was set to stop then (err 30003)"),
    "err(40001)": _l("an administrator refused the send in WeChat (mass-send protection, err 40001)"),
    "err(40002)": _l("no administrator confirmed the send within 30 minutes (mass-send protection, err 40002)"),
    "send_fail": _l("the platform reported that the send failed"),
    "deleted": _l("the message was deleted after it was sent"),
    "errcode_45028": _l("no mass-send quota is left on the platform (platform error 45028)"),
    "errcode_48001": _l(
        "the account may not mass send through the API: only verified accounts can (platform error 48001)"
    ),
    "no_answer": _l(
        "the platform gave no answer to the send after several tries (%(error)s): check the back office's sent messages"
    ),
    "no_result": _l("the platform gave no result within 24 hours of the send: check the back office's sent messages"),
    "draft": _l("the edition's combined draft could not be made (%(error)s); nothing was sent"),
    "tasks_changed": _l(
        "an article of the edition went live alone or changed after the edition was scheduled (%(error)s); "
        "nothing was sent"
    ),
    "platform": _l("the platform refused the send (%(error)s)"),
    "not_sent": _l("the send could not reach the platform (%(error)s); nothing was sent"),
}


def _failure(labels: dict, code: str | None, detail: str | None) -> str:
    """A known code's sentence in the language in force, else `detail` (the platform's own words)."""
    label = labels.get(code or "")
    return str(label) % {"error": detail or ""} if label is not None else detail or ""


def edition_failure(code: str | None, detail: str | None = None) -> str:
    return _failure(EDITION_FAILURE_LABELS, code, detail)


# Why a day's statistics could not be fetched (docs/api.md §19), by the platform's errcode.
STATS_ERROR_LABELS = {
    61500: _l("the platform refused the date format (61500)"),
    61501: _l("the date is outside the range the platform keeps (61501)"),
    48001: _l("the account may not read statistics through the API (48001: no permission)"),
    45009: _l("the account used up today's API quota (45009); tried again later"),
}
# The comment calls' refusals by their meaning (docs/api.md §23); other errcodes are shown in the platform's words.
COMMENT_ERROR_LABELS = {
    88000: _l("the account has no comment privilege"),
    88001: _l("the platform knows no such send (msg_data_id) or article"),
    88002: _l("the article or the comment is limited for safety"),
}
FEEDBACK_LABELS = {
    "all": _l("All"),
    "unprocessed": _l("Unprocessed"),
    "processing": _l("Processing"),
    "processed": _l("Processed"),
}
FEEDBACK_TYPE_LABELS = {
    "bug": _l("Bug"),
    "suggestion": _l("Suggestion"),
    "content": _p("feedback type", "Content"),
    "account": _p("feedback type: the app user's account", "Account"),
    "other": _l("Other"),
}
REASON_LABELS = {
    "content_quality": _l("Content quality"),
    "factual_error": _l("Factual error"),
    "compliance_risk": _l("Compliance risk"),
    "style_mismatch": _l("Style mismatch"),
    "image_issue": _l("Image issue"),
    "other": _l("Other"),
}
ELEMENT_LABELS = {
    "title": _l("Title"),
    "summary": _l("Summary"),
    "author": _l("Author"),
    "body": _l("Body"),
    "bodyImages": _l("Body images"),
    "coverImage": _l("Cover image"),
    "description": _l("Description"),
    "images": _l("Images"),
    "coverCrop": _l("Cover crop"),
    "commentSettings": _l("Comment settings"),
}
CONTENT_TYPE_LABELS = {"article": _l("Article"), "image_post": _l("Image post")}
THEME_LABELS = {"default": _l("Default"), "tech-blue": _l("Tech blue"), "warm-paper": _l("Warm paper")}
JOB_STATUS_LABELS = {"running": _l("Running"), "succeeded": _l("Succeeded"), "failed": _l("Failed")}
TRIGGER_LABELS = {"manual": _l("Manual"), "auto_after_approval": _l("After approval")}
ATTACHMENT_LABELS = {"screenshot": _l("Screenshot"), "log_file": _l("Log file")}
ACTOR_LABELS = {"agent": _l("the agent"), "admin": _l("an administrator"), "system": _l("the system")}
EVENT_LABELS = {
    "task_created": _l("Task created"),
    "draft_saved": _l("Draft saved"),
    "rework_submitted": _l("Rework submitted"),
    "returned_to_review": _l("Returned to review"),
    "approved": _l("Approved"),
    "rejected": _l("Rejected for rework"),
    "publish_succeeded": _l("Platform draft ready"),
    "publish_failed": _l("Publish failed"),
    "agent_notified": _l("Agent notified"),
    "agent_notification_failed": _l("Agent notification failed"),
    "preview_sent": _l("Preview sent to a phone"),
    "live_scheduled": _l("Publishing to readers requested"),  # now, or at the time it names
    "live_canceled": _l("Publishing to readers canceled"),
    "live_submitted": _l("Submitted to WeChat for readers"),
    "live": _l("Published to readers"),
    "live_failed": _l("Going live failed"),
    "edition_scheduled": _l("Edition scheduled for followers"),
    "edition_sent": _l("Sent to followers"),
    "edition_failed": _l("Edition not sent"),
    "decided_in_chat": _l("Decided in the team's chat"),
    "comment_reply_proposed": _l("Reply to a reader proposed"),
    "comment_replied": _l("Reader answered"),
    "comment_reply_deleted": _l("Reply to a reader deleted"),
    "comment_featured": _l("Comment featured"),
    "comment_unfeatured": _l("Comment no longer featured"),
    "comment_deleted": _l("Comment deleted"),
    "comments_opened": _l("Comments opened"),
    "comments_closed": _l("Comments closed"),
}
ACTION_LABELS = {
    "approve_and_publish": _l("Approve and publish"),
    "approve_without_publish": _l("Approve without publishing"),
    "reject_rework": _l("Reject for rework"),
}
# Keys of a timeline event's data the pages leave out: what another part of the page shows (the changes, the
# publish jobs' table) and the platform's and the service's ids, which mean nothing to an editor (the API has them).
EVENT_DATA_HIDDEN = frozenset(
    {"changes", "textDiff", "articleId", "failCode", "failDetail", "jobId", "retryOf", "draftMediaId", "publishId"}
    | {"messageId", "editionId", "commentId", "proposalId"}
)
# Keys of a timeline event's data (services write them); a key missing here is shown as it is.
EVENT_DATA_LABELS = {
    "contentType": _l("Type"),
    "publicAccount": _l("Account"),
    "action": _l("Decision"),
    "platform": _l("Chat app"),
    "rejectionReason": _l("Reason"),
    "rejectedElements": _l("Fields to rework"),
    "rejectionNote": _l("Note"),
    "fields": _l("Fields"),
    "remainingElements": _l("Still to rework"),
    "lastError": _l("Error"),
    "to": _l("Recipient"),
    "triggerMode": _l("Trigger"),
    "attempt": _l("Attempt"),
    "attemptCount": _l("Attempt"),
    "eventType": _l("Event"),
    "error": _l("Error"),
    "willRetry": _l("Will retry"),
    "at": _l("Publishing at"),
    "articleUrl": _l("Link"),
    "failReason": _l("Reason"),
}
# The API's English words about one field that pages say in their own language instead (static/api.js), by
# those words: why a going-live time is refused (services/live/golive.py when(), docs/api.md §18).
FIELD_MESSAGE_LABELS = {
    "is more than 60 seconds in the past": _l("This time has passed: choose a time ahead, or publish now."),
    "is more than 30 days ahead": _l("This time is more than 30 days ahead: choose a time within 30 days."),
}
# The team's chat apps (rules.vocabulary.CHAT_PLATFORMS), as a decision made in one names it.
CHAT_PLATFORM_LABELS = {"feishu": _l("Feishu"), "wecom": _l("WeCom")}
# Data values that are codes, by key: shown through these tables.
EVENT_DATA_VALUES = {
    "platform": CHAT_PLATFORM_LABELS,
    "contentType": CONTENT_TYPE_LABELS,
    "rejectionReason": REASON_LABELS,
    "action": ACTION_LABELS,
    "rejectedElements": ELEMENT_LABELS,
    "fields": ELEMENT_LABELS,
    "remainingElements": ELEMENT_LABELS,
    "triggerMode": TRIGGER_LABELS,
}


def live_failure(code: str | None, detail: str | None) -> str:
    return _failure(LIVE_FAILURE_LABELS, code, detail)
