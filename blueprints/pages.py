"""Admin HTML pages (docs/api.md §10). They read through the JSON routes' service functions; every change is
made by the page's script through the JSON API, so the rules live in one place and the pages show its errors."""

import json
from urllib.parse import parse_qs, urlencode

from flask import Blueprint, redirect, render_template, request
from flask_babel import ngettext
from flask_login import current_user
from marshmallow import EXCLUDE

from blueprints import i18n
from blueprints.auth import safe_next
from blueprints.bodies import load
from blueprints.common import settings
from blueprints.guards import admin_required, check_same_origin
from blueprints.page_words import LABELS
from blueprints.reads_chart import reads_chart
from blueprints.script_words import ERROR_WORDS, script_words
from rules.client_input import url_parts, whole_number
from rules.ids import now_iso
from rules.labels import THEME_LABELS, edition_failure, live_failure
from rules.limits import (
    APPROVAL_AUTHOR_MAX,
    APPROVAL_SUMMARY_MAX,
    MAX_TEXT,
    PLATFORM_TITLE_CHARS,
    RENDER_INLINE_CHARS,
    TITLE_MAX,
)
from rules.vocabulary import EDITION_MAX_ARTICLES, ELEMENT_KEYS, PAGE_LANGUAGES, REJECTION_REASONS, STATUSES
from schemas.feedback import FeedbackListQuerySchema
from schemas.review import TaskListQuerySchema
from services import review
from services.comments.reading import task_comments, unanswered
from services.editions.page import page_data as edition_page_data
from services.editions.page import task_offer
from services.errors import ValidationFailed
from services.feedback import queries as feedback_queries
from services.live import failure_words
from services.publishing import retryable_jobs
from services.rendering import THEMES
from services.review.changes import rework_rounds
from services.stats import failure_words as stats_failure_words
from services.stats import task_stats, total_reads

bp = Blueprint("pages", __name__)
PAGE_SIZE = 20
COMMENTS_PAGE = 50

# The counters under the text fields show the limits a decision is checked against, and warn past what
# the platform's documents give (a title: docs/api.md §5 "Titles").
FIELD_WARNINGS = {"title": PLATFORM_TITLE_CHARS}
FIELD_LIMITS = {
    "title": TITLE_MAX,
    "summary": APPROVAL_SUMMARY_MAX,
    "author": APPROVAL_AUTHOR_MAX,
    "description": MAX_TEXT,
}


def init_app(app):
    app.after_request(i18n.vary_by_language)


@bp.app_context_processor
def labels():
    # ACCOUNTS: code -> name, as WECHAT_ACCOUNTS configures them (docs/api.md §18)
    return {
        **LABELS,
        "ACCOUNTS": settings().accounts,
        "FIELD_LIMITS": FIELD_LIMITS,
        "FIELD_WARNINGS": FIELD_WARNINGS,
        "page_language": i18n.language(),
        "script_words": script_words,
        "ERROR_WORDS": ERROR_WORDS,
        "login_wait": i18n.login_wait,
    }


@bp.post("/language")
def choose_language():
    """The language switch of every page: the review_lang cookie for a year, back to the page (docs/api.md §14)."""
    check_same_origin()
    chosen = request.form.get("lang", "")
    response = redirect(safe_next(request.form.get("next", "")), 303)
    if chosen in PAGE_LANGUAGES:
        i18n.set_language_cookie(response, chosen)
    return response


@bp.app_template_filter()
def sentence(message):
    """A service message as one sentence: capital first letter, one full stop."""
    text = str(message or "").strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


@bp.app_template_filter()
def local_time(value):
    return i18n.local_time(value)


@bp.app_template_filter()
def failure_reason(event):
    """A live_failed or edition_failed timeline event's reason in the page's language (its code's sentence, else
    the words stored, in English)."""
    data = event.get("data") or {}
    code, words = data.get("failCode"), edition_failure if event.get("type") == "edition_failed" else live_failure
    return words(code, data.get("failDetail")) if code else data.get("failReason")


@bp.app_template_filter()
def filesize(size):
    """Bytes for people: 32 bytes, 4.2 KiB, 1.5 MiB."""
    if size < 1024:
        return ngettext("%(num)d byte", "%(num)d bytes", size)
    kib = size / 1024
    return f"{kib:.1f} KiB" if round(kib, 1) < 1024 else f"{kib / 1024:.1f} MiB"


@bp.app_template_filter()
def query(args):
    """A query string of the given, non-empty arguments in a stable order (the list pages' links)."""
    return urlencode(sorted((key, value) for key, value in args.items() if value))


@bp.app_template_filter()
def readable_json(value):
    """JSON as a person reads it (Jinja escapes it as text; tojson's \\u003c escapes are for scripts)."""
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _next_of_referrer():
    """`next` of the sign-in page a failed attempt was posted from (its redirect carries only the
    error, docs/api.md §3), so the admin still lands where they were going."""
    referrer = url_parts(request.referrer or "")
    if referrer is None or referrer.netloc != request.host or referrer.path != "/login":
        return ""
    return parse_qs(referrer.query).get("next", [""])[0]


@bp.get("/login")
def login_page():
    """The sign-in form (it posts to /api/auth/login, blueprints/auth.py)."""
    error, target = request.args.get("error"), request.args.get("next", "")
    if error and not target and (target := _next_of_referrer()):
        # Into this page's address, so that the referrer of a further failure has it too.
        return redirect("/login?" + urlencode({"error": error, "next": target}), 303)
    return render_template("login.html", error=error, next=target)  # the wait: i18n.login_wait, in words


@bp.get("/")
def home():
    """The review list is the start page (the feedback list for an admin who may only triage feedback)."""
    user = current_user
    feedback_only = user.is_authenticated and not user.has_permission("review") and user.has_permission("feedback")
    return redirect("/feedback" if feedback_only else "/review", 302)


def _clean(args, names):
    """Query parameters that were given and are not blank (an empty select means "no filter")."""
    return {name: args[name].strip() for name in names if (args.get(name) or "").strip()}


@bp.get("/review")
@admin_required("review")
def review_list():
    """Tasks with filters (status, account, dates), counts per status, newest first, cursor paging."""
    args = _clean(request.args, ("status", "publicAccount", "live", "from", "to", "cursor", "trail"))
    status = args.get("status") or ("all" if args.get("live") else "pending_review")  # as the API reads it
    shown = {"status": status, **{name: args.get(name, "") for name in ("publicAccount", "live", "from", "to")}}
    trail = [c for c in args.get("trail", "").split(",") if c]
    tasks: list[dict] = []
    total, next_cursor, counts, errors, message = 0, None, {}, {}, None
    try:
        query = load(
            TaskListQuerySchema,
            {**i18n.viewer_days({k: v for k, v in args.items() if k != "trail"}), "limit": PAGE_SIZE},
            unknown=EXCLUDE,
            where="query",
        )
        query["notLive"] = True  # the "Draft ready" tab lists and counts drafts not yet live (docs/api.md §18)
        tasks, total, next_cursor = review.list_tasks(query)
        counts = review.status_counts(query)
    except ValidationFailed as err:
        errors = {key.rstrip("_"): messages for key, messages in err.details.items()}
        message = err.message
    return render_template(
        "review_list.html",
        tasks=tasks,
        total=total,
        counts=counts,
        shown=shown,
        reads=total_reads([task["id"] for task in tasks]),
        errors=errors,
        message=message,
        statuses=("all", *STATUSES),
        paging=_paging(trail, args.get("cursor"), next_cursor, len(tasks)),
    )


def _paging(trail, cursor, next_cursor, shown):
    """Keyset pages only go forward, so links carry the cursors of the pages before: page n > 1 has the cursor
    that led to it and `trail`, the cursors of pages 2..n-1."""
    page = len(trail) + 2 if cursor else 1
    previous = None
    if cursor:
        previous = {"cursor": trail[-1], "trail": ",".join(trail[:-1])} if trail else {}
    following = {"cursor": next_cursor, "trail": ",".join(trail + [cursor] if cursor else [])} if next_cursor else None
    return {
        "page": page,
        "first": (page - 1) * PAGE_SIZE + 1,
        "last": (page - 1) * PAGE_SIZE + shown,
        "next": following,
        "previous": previous,
    }


@bp.get("/review/<task_id>")
@admin_required("review")
def review_detail(task_id):
    """One task: candidates side by side, the selection editor, decision, publishing, timeline, preview."""
    task = review.get_task(task_id)
    overrides = settings().theme_overrides_for(task["publicAccount"])
    state, assets = review.form_state(task, task["publicAccount"] not in settings().comments_closed)
    # Long bodies come later, through the preview route, when the reviewer asks (docs/api.md §14).
    rendered = {
        o["id"]: review.preview_body(o["content"], "default", overrides)[0]
        if len(o["content"]) <= RENDER_INLINE_CHARS
        else None
        for o in task["candidates"].get("bodyOptions") or []
    }
    preview, preview_error = None, None
    if len(state["body"]["markdown"] or "") <= RENDER_INLINE_CHARS:
        preview, preview_error = review.preview_body(state["body"]["markdown"], state["body"]["theme"], overrides)
    return render_template(
        "review_detail.html",
        task=task,
        state=state,
        assets=assets,
        **_readers(task),
        rendered=rendered,
        preview=preview,
        preview_error=preview_error,
        themes={name: THEME_LABELS.get(name, name) for name in THEMES},
        element_keys=ELEMENT_KEYS[task["contentType"]],
        reasons=REJECTION_REASONS,
        now_iso=now_iso(),
        preview_recipients=settings().wechat_preview_recipients.get(task["publicAccount"], ()),
        rework=rework_rounds(task),
        retryable=retryable_jobs(task),
        presence_seconds=settings().presence_seconds,
    )


def _readers(task):
    """The task page's going-live and readers' parts (docs/api.md §18, §19), failures in the page's words."""
    standing = task["live"]["status"] if task["live"] else None
    stats = task_stats(task["id"]) if standing == "live" else None
    return {
        "stats": stats,
        "chart": reads_chart(stats["days"]) if stats else None,
        "stats_failure": stats_failure_words(task["id"]) if stats and stats["lastError"] else None,
        "live_failure": failure_words(task["id"]) if standing == "failed" else None,
        "edition_offer": task_offer(task, settings()),
        "stats_hour": settings().stats_hour,
        **_comments(task),
    }


# The task page's comment filters (docs/api.md §23): which of the task's comments the 留言 section lists.
COMMENT_FILTERS = {
    "all": lambda comment: True,
    "unanswered": lambda comment: comment["reply"] is None and not comment["removed"],
    "featured": lambda comment: comment["featured"],
}


def _comments(task):
    """The readers' comments of a live task (docs/api.md §23), filtered as the query asks; none before."""
    standing = task["live"]["status"] if task["live"] else None
    found = task_comments(task["id"]) if standing == "live" else None
    shown = request.args.get("comments", "all")
    shown = shown if shown in COMMENT_FILTERS else "all"
    if found is not None:
        found["shown"] = [comment for comment in found["comments"] if COMMENT_FILTERS[shown](comment)]
    return {"comments": found, "comment_filter": shown}


@bp.get("/comments")
@admin_required("review")
def comments_page():
    """The readers' comments not answered yet across tasks and accounts, oldest first (docs/api.md §23)."""
    asked = whole_number(request.args.get("offset", "0"), 4000)  # a page far past the end is empty
    offset = 0 if asked is None else min(asked, 10**6)
    found = unanswered(COMMENTS_PAGE + 1, offset)
    return render_template(
        "comments.html",
        comments=found[:COMMENTS_PAGE],
        offset=offset,
        more=len(found) > COMMENTS_PAGE,
        page_size=COMMENTS_PAGE,
    )


@bp.get("/editions")
@admin_required("review")
def editions_page():
    """Send to followers (docs/api.md §21): per account, the draft-ready articles, the edition being composed
    in order, its follower's-eye preview, the quota left and the editions with their results."""
    accounts = settings().accounts
    account = request.args.get("account", "")
    account = account if account in accounts else next(iter(accounts), "")
    edition = request.args.get("edition", "")[:64] or None
    data = edition_page_data(account, settings(), edition) if account else None
    return render_template(
        "editions.html", account=account, data=data, now_iso=now_iso(), EDITION_MAX=EDITION_MAX_ARTICLES
    )


FEEDBACK_FILTERS = ("status", "type", "appName", "platform", "appVersion", "keyword", "from", "to", "page")


@bp.get("/feedback")
@admin_required("feedback")
def feedback_list():
    """Feedback with filters, whole-table counts per status and page numbers."""
    args = _clean(request.args, FEEDBACK_FILTERS)
    result, errors, message = None, {}, None
    bounded = i18n.viewer_days(args)  # the viewer's days (docs/api.md §14), for the list and its CSV export
    try:
        result = feedback_queries.list_feedbacks(
            load(FeedbackListQuerySchema, {**bounded, "pageSize": PAGE_SIZE}, unknown=EXCLUDE, where="query")
        )
    except ValidationFailed as err:
        errors, message = dict(err.details), err.message
    shown = {name: args.get(name, "") for name in FEEDBACK_FILTERS}
    shown["status"] = shown["status"] or "all"
    export = {name: bounded.get(name, "") for name in FEEDBACK_FILTERS if name != "page"}
    return render_template(
        "feedback_list.html",
        result=result,
        errors=errors,
        message=message,
        shown=shown,
        types=settings().feedback_types,
        export=export,
    )


@bp.get("/feedback/<feedback_id>")
@admin_required("feedback")
def feedback_detail(feedback_id):
    """One feedback with its attachments (screenshots shown) and the status form."""
    return render_template("feedback_detail.html", feedback=feedback_queries.get_feedback(feedback_id))
