"""The messages of the pages' scripts, in the page's language (CONTRACT §14).

base.html hands `script_words()` to the scripts as JSON; static/words.js looks them up by key
(`T("key", {name: value})`, with `%(name)s` placeholders). tests/test_i18n.py checks that every key a
script uses is here. Error codes of the API (CONTRACT §2) have a sentence each, shown before the API's
own English message, which stays as it came (the JSON API keeps English).
"""
from flask_babel import lazy_gettext as _l

WORDS = {
    # static/api.js
    "network": _l("The server could not be reached; check the connection and try again."),
    "session_ended": _l("Your session has ended; sign in again (open /login in another tab, then retry)."),
    "stale": _l("This task was changed since the page was opened; reload the page to see the current version."),
    "http_status": _l("The server answered %(status)s."),
    "field_check": _l("Check this field:"),
    # static/presence.js (CONTRACT §15): who else has the task open; a decision refused as stale
    "presence.also_open": _l("Also open by %(names)s."), "presence.editing": _l("%(name)s (editing)"),
    "presence.separator": _l(", "), "stale.agent": _l("the agent"), "stale.by": _l("Changed by %(names)s."),
    "stale.changed": _l("This task was changed after this page was opened; your decision was not saved."),
    "stale.reload": _l("Reload the task"),
}

# A sentence for each error code an API answer can carry (services.errors.ERROR_CODES).
ERROR_WORDS = {
    "validation_error": _l("Some entries need changing."),
    "unauthorized": _l("You are not signed in."),
    "forbidden": _l("Your account may not do this."),
    "not_found": _l("This no longer exists."),
    "method_not_allowed": _l("This action is not available here."),
    "invalid_state": _l("The task's current status does not allow this."),
    "field_locked": _l("This field is locked and cannot be changed now."),
    "publish_in_progress": _l("A publish of this task is already running; wait for it to finish."),
    "idempotency_conflict": _l("The same request was already sent with other content."),
    "export_failed": _l("The package could not be built."),
    "duplicate_feedback": _l("The same feedback was received a moment ago."),
    "attachment_limit": _l("This feedback has as many attachments as it may have."),
    "precondition_failed": _l("This task was changed since the page was opened; reload the page to see "
                              "the current version."),
    "payload_too_large": _l("The upload is larger than allowed."),
    "rate_limited": _l("Too many attempts; wait a little and try again."),
    "storage_unavailable": _l("The server could not save or read its data; try again later."),
    "internal_error": _l("Something went wrong on the server."),
    "http_error": _l("The request failed."),
    "no_draft": _l("There is no WeChat draft to preview yet; publish first."),
    "platform_error": _l("The WeChat platform refused the request."),
}


def script_words():
    """Every script message in the language of this request, as plain text for JSON."""
    return {**{key: str(text) for key, text in WORDS.items()},
            **{f"error.{code}": str(text) for code, text in ERROR_WORDS.items()}}
