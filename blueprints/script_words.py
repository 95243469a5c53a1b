"""The messages of the pages' scripts in the page's language (docs/api.md §14 "Words"): base.html hands
`script_words()` to them as JSON; static/words.js looks them up by key (`T("key", {name: value})`, `%(name)s`
placeholders). tests/pages/test_i18n.py checks that every key a script uses is here."""

from flask_babel import lazy_gettext as _l
from flask_babel import lazy_pgettext as _p

from rules.labels import (
    ACTOR_LABELS,
    COMMENT_ERROR_LABELS,
    ELEMENT_LABELS,
    EVENT_DATA_LABELS,
    EVENT_LABELS,
    FEEDBACK_LABELS,
    FIELD_MESSAGE_LABELS,
)

WORDS = {
    # static/api.js
    "network": _l("The server could not be reached; check the connection and try again."),
    "session_ended": _l("Your session has ended; sign in again (open /login in another tab, then retry)."),
    "stale": _l("This task was changed since the page was opened; reload the page to see the current version."),
    "http_status": _l("The server answered %(status)s."),
    # An API error in the page's words; the contexts say what each placeholder holds (templates/_macros.html
    # and templates/error.html use the same ones).
    "api.error": _p(
        "an API error: the page's sentence for its code, then the API's English message", "%(sentence)s %(message)s"
    ),
    "api.field_error": _p("the API's English message about one field, shown beside it", "%(message)s"),
    "api.other_error": _p("the API's English message about a field the page does not show", "%(path)s: %(message)s"),
    "api.errcode": _l(" (WeChat errcode %(errcode)s)"),
    # static/words.js: "3 min. ago" beside a time
    "time.hint": _l(" (%(hint)s)"),
    # static/presence.js (docs/api.md §15): who else has the task open; a decision refused as stale
    "presence.also_open": _l("Also open by %(names)s."),
    "presence.editing": _l("%(name)s (editing)"),
    "presence.separator": _l(", "),
    "stale.agent": ACTOR_LABELS["agent"],
    "stale.by": _l("Changed by %(names)s."),
    "stale.changed": _l("This task was changed after this page was opened; your decision was not saved."),
    "stale.reload": _l("Reload the task"),
    # static/words.js, static/review_preview.js
    "preview.updating": _l("Updating…"),
    "preview.images": _l("Images: %(num)s"),
    # static/review_detail.js
    "confirm.replace_body": _l("Replace your edited body with the text of the chosen option?"),
    "confirm.replace_text": _l("Replace your edited %(field)s with the chosen candidate?"),
    "confirm.replace_images": _l("Replace your edited image list with the images of the chosen group?"),
    "tile.library": _l("From the library"),
    "tile.uploaded": _l("Uploaded"),
    "image.cover": _l("(cover)"),
    "image.up": _l("Move image %(num)s up"),
    "image.down": _l("Move image %(num)s down"),
    "image.remove": _l("Remove"),
    "image.remove_label": _l("Remove image %(num)s"),
    "image.twice": _l("%(name)s is image %(num)s of the list already."),
    "image.an_image": _l("an image"),
    # static/review_actions.js
    "publish.uploading": _l("Uploading images: %(done)s of %(total)s…"),
    "publish.saving": _l("Saving the draft on WeChat…"),
    "publish.starting": _l("Starting the publish…"),
    "publish.done": _l("Published as WeChat draft."),
    "publish.failed": _l("Publishing failed: %(error)s. Fix the cause and retry the job."),
    "publish.no_reason": _l("no reason given"),
    "publish.finished": _l("Publish attempt finished."),
    "decision.choose": _l("Choose what should happen to this task."),
    "decision.choose_one": _l("Choose one of the three decisions."),
    "decision.approved": _l("Approved."),
    "decision.approved_only": _l("Approved without publishing."),
    "decision.rejected": _l("Sent back to the agent for rework."),
    "busy.submitting": _l("Submitting…"),
    "busy.publishing": _l("Publishing…"),
    "busy.retrying": _l("Retrying…"),
    "busy.sending": _l("Sending…"),
    "busy.preparing": _l("Preparing…"),
    "busy.deleting": _l("Deleting…"),
    "preview.sent": _l("Preview sent to %(name)s's phone."),
    "event.preview_sent": EVENT_LABELS["preview_sent"],
    "event.by": _l("by %(who)s"),
    "event.recipient": EVENT_DATA_LABELS["to"],
    "confirm.delete": _l(
        'Delete the task "%(topic)s"? Its uploaded review images are removed too. This cannot be undone.'
    ),
    "confirm.delete_live": _l(
        'Delete the task "%(topic)s"? Its uploaded review images are removed too; the '
        "article already published to readers stays on WeChat. This cannot be undone."
    ),
    "confirm.delete_publishing": _l(
        'Delete the task "%(topic)s"? Its uploaded review images are removed too; '
        "WeChat is publishing its article to readers, and once live it stays on WeChat. "
        "This cannot be undone."
    ),
    "deleted": _l('Deleted the task "%(topic)s" (%(count)s files removed).'),
    # static/review_live.js (docs/api.md §18)
    "live.confirm_now": _l(
        'Publish "%(topic)s" to the account\'s readers now? It gets its address at once, but followers are not '
        "notified, and it can no longer join an edition; only WeChat's back office can take it down."
    ),
    "live.in_edition": _l("“%(topic)s” is in today's edition: send it to followers here."),
    "busy.adding": _l("Adding…"),
    "live.asked": _l("Sent to WeChat for publishing; the result appears here when WeChat reports it."),
    "live.scheduled": _l("Scheduled for readers at %(when)s."),
    "live.canceled": _l("The schedule was canceled."),
    "live.choose_time": _l("Choose a date and time first."),
    "busy.going_live": _l("Sending to WeChat…"),
    # static/editions.js (docs/api.md §21): composing, previewing and sending an edition
    "edition.headline": _l("Headline"),
    "edition.position": _p("an article's place in an edition", "No. %(num)s"),
    "edition.up": _l("Move “%(title)s” up"),
    "edition.down": _l("Move “%(title)s” down"),
    "edition.remove": _l("Remove “%(title)s” from the edition"),
    "edition.add": _l("Add “%(title)s” to the edition"),
    "edition.add_short": _p("a button: put an article in the edition", "Add"),
    "edition.count": _l("%(num)s of at most %(max)s articles"),
    "edition.unsaved": _l("Not saved yet"),
    "edition.saved": _l("Saved"),
    "busy.saving": _l("Saving…"),
    "edition.now_headline": _l("“%(title)s” is now the headline."),
    "edition.moved": _l("“%(title)s” is now article %(num)s of %(total)s."),
    "edition.added": _l("Added “%(title)s”: %(num)s of at most %(max)s articles."),
    "edition.removed": _l("Removed “%(title)s”."),
    "edition.full": _l("An edition holds at most %(max)s articles."),
    "edition.none_chosen": _l("Add at least one article to the edition first."),
    "edition.refused": _p(
        "an article the API refused for the edition; the reason is the API's English words",
        "“%(title)s” cannot go in this edition: %(reason)s.",
    ),
    "edition.reload": _l("Reload the page to see the articles as they are now."),
    "edition.changed": _l("This edition was changed or sent meanwhile; reload the page."),
    "edition.quota_exceeded": _l(
        "This account's sends for that day or month are used up; the first possible send is at %(when)s."
    ),
    "edition.wechat_id": _l("Enter your WeChat ID."),
    "edition.preview_sent": _l("Sent to the WeChat of %(name)s: look at your phone."),
    "edition.tags_loading": _l("Loading the tags…"),
    "edition.tag": _l("%(name)s (%(count)s followers)"),
    "edition.to_tag": _l("Followers tagged %(name)s"),
    "edition.no_tags": _l("This account has no follower tags."),
    "edition.choose_tag": _l("Choose a tag."),
    "edition.confirm_now": _l(
        "Send these %(num)s articles to every follower of %(account)s now? Followers get "
        "them at once; a sent message cannot be called back from here."
    ),
    "edition.confirm_now_tag": _l(
        "Send these %(num)s articles to the followers of %(account)s tagged %(tag)s now? "
        "They get them at once; a sent message cannot be called back from here."
    ),
    "edition.confirm_at": _l("Send these %(num)s articles to every follower of %(account)s at %(when)s?"),
    "edition.confirm_at_tag": _l(
        "Send these %(num)s articles to the followers of %(account)s tagged %(tag)s at %(when)s?"
    ),
    "edition.confirm_protected": _l("An administrator must then confirm it in WeChat within 30 minutes."),
    "busy.canceling": _l("Canceling…"),
    "edition.sending": _l("Sending to followers: the result appears here when WeChat reports it."),
    "edition.scheduled": _l("Scheduled for followers at %(when)s."),
    "edition.canceled": _l("The scheduled send was canceled."),
    "edition.confirm_delete": _l("Delete this edition? Its articles stay as they are."),
    "edition.deleted": _l("The edition was deleted."),
    # static/comments.js (docs/api.md §23): readers' comments on the task page and on /comments
    "comments.empty": _l("Write the reply first."),
    "comments.replied": _l("The reply was sent to the reader."),
    "comments.reply_deleted": _l("The reply was deleted."),
    "comments.featured": _l("The comment is featured for readers."),
    "comments.unfeatured": _l("The comment is no longer featured."),
    "comments.deleted": _l("The comment was deleted for readers."),
    "comments.opened": _l("The article's comments are open."),
    "comments.closed": _l("The article's comments are closed."),
    "comments.confirm_delete_reply": _l("Delete the reply? Readers no longer see it."),
    "comments.confirm_delete": _l("Delete this comment for readers? It stays here, marked removed."),
    "comments.refused": _l("WeChat refused: %(reason)s (WeChat errcode %(errcode)s). Nothing was changed."),
    **{f"comments.errcode.{code}": label for code, label in COMMENT_ERROR_LABELS.items()},
    # static/feedback_detail.js
    "feedback.choose": _l("Choose a status."),
    "feedback.choose_one": _l("Choose one of the three statuses."),
    "feedback.saved": _l("Saved: %(status)s."),
    "feedback.saved_by": _l("Saved: %(status)s by %(who)s."),
    "feedback.processed_at": _l("Processed by %(who)s at %(when)s."),
    "feedback.last_processed": _l("Last processed by %(who)s."),
    "feedback.not_processed": _l("Not processed yet."),
    # static/library.js, static/crop.js
    "library.use": _l("Use %(name)s (%(size)s)"),
    "library.empty": _l("No images in the library match. Add some with: flask --app app assets import PATH"),
    "library.page": _l("Page %(page)s of %(pages)s (%(total)s images)"),
    "crop.readout": _l("Box %(box)s px of %(image)s, from %(at)s."),
    "crop.none": _l("Choose at least one image; the crop is taken from the first one."),
    # the words of codes the scripts show
    **{f"field.{key}": label for key, label in ELEMENT_LABELS.items()},
    **{f"feedback.status.{key}": label for key, label in FEEDBACK_LABELS.items()},
    # static/api.js: the API's English words about a field that the page says in its own
    **{f"api.reason.{message}": label for message, label in FIELD_MESSAGE_LABELS.items()},
}

# A sentence for each error code an API answer can carry (services.errors.ERROR_CODES).
ERROR_WORDS = {
    "validation_error": _l("Some entries need changing."),
    "unauthorized": _l("You are not signed in."),
    "forbidden": _l("Your account may not do this."),
    "not_found": _l("This no longer exists."),
    "method_not_allowed": _l("This action is not available here."),
    "invalid_state": _l("The task's current status does not allow this."),
    "quota_exceeded": _l("The account's mass-send quota is used up."),
    "in_edition": _l(
        "This article is in an edition that is scheduled or sending: it reaches readers with that edition. "
        "Cancel the edition's send first to publish it alone."
    ),
    "field_locked": _l("This field is locked and cannot be changed now."),
    "publish_in_progress": _l("A publish of this task is already running; wait for it to finish."),
    "idempotency_conflict": _l("The same request was already sent with other content."),
    "export_failed": _l("The package could not be built."),
    "duplicate_feedback": _l("The same feedback was received a moment ago."),
    "attachment_limit": _l("This feedback has as many attachments as it may have."),
    "precondition_failed": _l(
        "This task was changed since the page was opened; reload the page to see the current version."
    ),
    "payload_too_large": _l("The upload is larger than allowed."),
    "rate_limited": _l("Too many attempts; wait a little and try again."),
    "storage_unavailable": _l("The server could not save or read its data; try again later."),
    "internal_error": _l("Something went wrong on the server."),
    "http_error": _l("The request failed."),
    "no_draft": _l("There is no WeChat draft to preview yet; publish first."),
    "draft_gone": _l("WeChat removed this draft once it was published or sent: there is nothing left to preview."),
    "platform_error": _l("The WeChat platform refused the request."),
}


def script_words():
    """Every script message in the language of this request, as plain text for JSON."""
    return {
        **{key: str(text) for key, text in WORDS.items()},
        **{f"error.{code}": str(text) for code, text in ERROR_WORDS.items()},
    }
