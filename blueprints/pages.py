"""Admin HTML pages (CONTRACT §10): review list and detail, feedback list and detail, a body preview.

Pages read through the same service functions as the JSON routes. Every change (decision,
publish, retry, delete, feedback status) is made by the page's JavaScript through the JSON API,
so the rules live in one place and the pages show the API's own error messages.
"""
import json

from flask import Blueprint, current_app, redirect, render_template, request
from flask_login import current_user
from marshmallow import EXCLUDE, Schema, fields, validate

from blueprints.apidoc import api, load
from blueprints.guards import admin_required
from rules.limits import APPROVAL_AUTHOR_MAX, APPROVAL_SUMMARY_MAX, MAX_TEXT, TITLE_MAX
from rules.vocabulary import ACCOUNTS, ELEMENT_KEYS, REJECTION_REASONS, REQUIRED_SELECTION_KEYS, STATUSES
from schemas.feedback import FeedbackListQuerySchema
from schemas.review import TaskListQuerySchema
from services import review
from services.asset_refs import resolve_many
from services.errors import ValidationFailed
from services.feedback import queries as feedback_queries
from services.rendering import THEMES, image_urls, render_article, theme_config

bp = Blueprint("pages", __name__)
PAGE_SIZE = 20
STATUS_LABELS = {"all": "All", "pending_review": "Pending review", "approved": "Approved",
                 "published": "Published", "rejected_rework": "Rejected for rework"}
FEEDBACK_LABELS = {"all": "All", "unprocessed": "Unprocessed", "processing": "Processing", "processed": "Processed"}
REASON_LABELS = {"content_quality": "Content quality", "factual_error": "Factual error",
                 "compliance_risk": "Compliance risk", "style_mismatch": "Style mismatch",
                 "image_issue": "Image issue", "other": "Other"}
ELEMENT_LABELS = {"title": "Title", "summary": "Summary", "body": "Body", "bodyImages": "Body images",
                  "coverImage": "Cover image", "description": "Description", "images": "Images",
                  "coverCrop": "Cover crop", "commentSettings": "Comment settings"}


# The counters under the text fields show the limits a decision is checked against.
FIELD_LIMITS = {"title": TITLE_MAX, "summary": APPROVAL_SUMMARY_MAX, "author": APPROVAL_AUTHOR_MAX,
                "description": MAX_TEXT}


@bp.app_context_processor
def labels():
    return {"STATUS_LABELS": STATUS_LABELS, "FEEDBACK_LABELS": FEEDBACK_LABELS, "ACCOUNTS": ACCOUNTS,
            "REASON_LABELS": REASON_LABELS, "ELEMENT_LABELS": ELEMENT_LABELS, "FIELD_LIMITS": FIELD_LIMITS}


@bp.app_template_filter()
def sentence(message):
    """A service message as one sentence: capital first letter, one full stop."""
    text = str(message or "").strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


@bp.app_template_filter()
def filesize(size):
    """Bytes for people: 32 bytes, 4.2 KiB, 1.5 MiB."""
    if size < 1024:
        return f"{size} byte{'' if size == 1 else 's'}"
    kib = size / 1024
    return f"{kib:.1f} KiB" if round(kib, 1) < 1024 else f"{kib / 1024:.1f} MiB"


@bp.app_template_filter()
def readable_json(value):
    """JSON as a person reads it (Jinja escapes it as text; tojson's \\u003c escapes are for scripts)."""
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


@bp.get("/")
def home():
    """The review list is the start page (the feedback list for an admin who may only triage feedback)."""
    if current_user.is_authenticated and not current_user.has_permission("review") \
            and current_user.has_permission("feedback"):
        return redirect("/feedback", 302)
    return redirect("/review", 302)


def _clean(args, names):
    """Query parameters that were given and are not blank (an empty select means "no filter")."""
    return {name: args[name].strip() for name in names if (args.get(name) or "").strip()}


@bp.get("/review")
@admin_required("review")
def review_list():
    """Tasks with filters (status, account, dates), counts per status, newest first, cursor paging."""
    args = _clean(request.args, ("status", "publicAccount", "from", "to", "cursor", "trail"))
    shown = {"status": args.get("status", "pending_review"), "publicAccount": args.get("publicAccount", ""),
             "from": args.get("from", ""), "to": args.get("to", "")}
    trail = [c for c in args.get("trail", "").split(",") if c]
    tasks, total, next_cursor, counts, errors, message = [], 0, None, {}, {}, None
    try:
        query = load(TaskListQuerySchema, {**{k: v for k, v in args.items() if k != "trail"}, "limit": PAGE_SIZE},
                     unknown=EXCLUDE, where="query")
        tasks, total, next_cursor = review.list_tasks(query)
        for status in ("all", *STATUSES):
            counts[status] = review.list_tasks({**query, "status": status, "cursor": None, "limit": 1})[1]
    except ValidationFailed as err:
        errors = {key.rstrip("_"): messages for key, messages in err.details.items()}
        message = err.message
    return render_template("review_list.html", tasks=tasks, total=total, counts=counts, shown=shown,
                           errors=errors, message=message, statuses=("all", *STATUSES),
                           paging=_paging(trail, args.get("cursor"), next_cursor, len(tasks)))


def _paging(trail, cursor, next_cursor, shown):
    """Keyset pages only go forward, so links carry the cursors of the pages before (`trail`).

    Page 1 has no cursor; page n has the cursor that led to it and `trail` = the cursors of pages 2..n-1.
    """
    page = len(trail) + 2 if cursor else 1
    previous = None
    if cursor:
        previous = {"cursor": trail[-1], "trail": ",".join(trail[:-1])} if trail else {}
    following = {"cursor": next_cursor, "trail": ",".join(trail + [cursor] if cursor else [])} if next_cursor else None
    return {"page": page, "first": (page - 1) * PAGE_SIZE + 1, "last": (page - 1) * PAGE_SIZE + shown,
            "next": following, "previous": previous}


def _task_assets(task):
    """{key: asset dict} for every image the task names, keyed by assetId and by URL."""
    candidates, refs = task["candidates"], []
    refs += candidates.get("coverImages") or []
    for placeholder in candidates.get("bodyImageCandidates") or []:
        refs += placeholder["options"]
    for group in candidates.get("imageGroups") or []:
        refs += group["images"]
    for source in (task.get("selections") or {}, task.get("lockedSelections") or {}):
        refs += [source[k] for k in ("coverImage",) if k in source]
        refs += source.get("bodyImages") or []
        refs += source.get("images") or []
        if source.get("coverCrop"):
            refs.append({"assetId": source["coverCrop"]["assetId"]})
    out = {}
    for asset in resolve_many(refs).values():
        if asset is not None:
            data = asset.to_dict()
            out[asset.asset_id] = out[asset.url] = data
    return out


def _identity(assets, ref):
    asset = assets.get(ref["assetId"] if isinstance(ref, dict) else ref) if ref is not None else None
    return asset["assetId"] if asset else ref


def _index_of(assets, ref, options):
    """Position of the image `ref` among candidate `options` (URL and {"assetId"} compare equal)."""
    wanted = _identity(assets, ref)
    return next((i for i, option in enumerate(options) if _identity(assets, option) == wanted), None)


def _text_field(key, options, selections, overrides, optional):
    """Initial state of a text field: the final value and which candidate it started from.

    An `optional` field (author) missing from saved selections was left empty on purpose."""
    default = "" if optional and selections else (options[0] if options else "")
    value = selections.get(key, default)
    based_on = (overrides.get(key) or {}).get("basedOn", value)
    chosen = options.index(based_on) if based_on in options else None
    return {"key": key, "options": options, "value": value, "chosen": chosen}


def _form_state(task):
    """What the selection form shows first: saved selections, else the first candidate of each field."""
    candidates, selections = task["candidates"], task.get("selections") or {}
    overrides, state = task.get("manualOverrides") or {}, {}
    text_keys = (("title", "titles"), ("summary", "summaries"), ("author", "authors")) \
        if task["contentType"] == "article" else (("title", "titles"), ("description", "descriptions"))
    required = REQUIRED_SELECTION_KEYS[task["contentType"]]
    state["text"] = [_text_field(key, candidates.get(name) or [], selections, overrides, key not in required)
                     for key, name in text_keys]
    options = candidates.get("bodyOptions") or []
    draft = task.get("bodyDraft") or {}
    source = next((o for o in options if o["id"] == draft.get("sourceBodyCandidateId")),
                  options[0] if options else None)
    state["body"] = {"source": source["id"] if source else None,
                     "markdown": draft.get("markdown", selections.get("body", source["content"] if source else "")),
                     "theme": draft.get("themeTemplate") or "default"}
    covers = candidates.get("coverImages") or []
    state["cover"] = selections.get("coverImage", covers[0] if covers else None)
    state["bodyImages"] = [(selections.get("bodyImages") or [])[i] if i < len(selections.get("bodyImages") or [])
                           else (p["options"] or [None])[0]
                           for i, p in enumerate(candidates.get("bodyImageCandidates") or [])]
    groups = candidates.get("imageGroups") or []
    images = selections.get("images")
    group = next((g for g in groups if g["images"] == images), None if images else (groups[0] if groups else None))
    state["group"] = group["id"] if group else None
    state["images"] = images if images is not None else (group["images"] if group else [])
    state["coverCrop"] = selections.get("coverCrop")
    # The review page defaults to comments on and not fans-only, whatever the candidates say.
    state["comments"] = selections.get("commentSettings") or {"needOpenComment": True, "onlyFansCanComment": False}
    return state


# What a previewed body shows instead of an image that is no asset. The page must not load it: a body
# from the agent could point at /api/auth/logout (signing the reviewer out) or at an outside tracker,
# and such an image cannot be published anyway (approval takes asset URLs only).
NOT_AN_ASSET = "/static/not-an-asset.svg"


def _render_preview(markdown, theme, account):
    overrides = (current_app.config.get("WECHAT_THEME_OVERRIDES") or {}).get(account)
    try:
        urls = image_urls(markdown or "")
        found = resolve_many(urls)
        unknown = {url: NOT_AN_ASSET for index, url in enumerate(urls) if found[index] is None}
        return render_article(markdown or "", theme, theme_config(theme, overrides), unknown), None
    except ValueError as err:
        return "", str(err)


@bp.get("/review/<task_id>")
@admin_required("review")
def review_detail(task_id):
    """One task: candidates side by side, the selection editor, decision, publishing, timeline, preview."""
    task = review.get_task(task_id)
    state, assets = _form_state(task), _task_assets(task)
    state["cover_index"] = _index_of(assets, state["cover"], task["candidates"].get("coverImages") or [])
    state["body_image_index"] = [_index_of(assets, chosen, placeholder["options"]) for chosen, placeholder
                                 in zip(state["bodyImages"], task["candidates"].get("bodyImageCandidates") or [],
                                        strict=False)]
    rendered = {o["id"]: _render_preview(o["content"], "default", task["publicAccount"])[0]
                for o in task["candidates"].get("bodyOptions") or []}
    preview, preview_error = _render_preview(state["body"]["markdown"], state["body"]["theme"], task["publicAccount"])
    return render_template("review_detail.html", task=task, state=state, assets=assets,
                           rendered=rendered, preview=preview, preview_error=preview_error,
                           themes={name: theme["label"] for name, theme in THEMES.items()},
                           element_keys=ELEMENT_KEYS[task["contentType"]], reasons=REJECTION_REASONS)


class PreviewSchema(Schema):
    markdown = fields.String(required=True, validate=validate.Length(max=200_000))
    themeTemplate = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    publicAccount = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(ACCOUNTS))


class PreviewResultSchema(Schema):
    html = fields.String(required=True, metadata={"description": "the themed article body, as published"})


@bp.post("/api/review/preview")
@admin_required("review")
@api(body=PreviewSchema, responses={200: PreviewResultSchema}, tags=["review"])
def preview(body):
    """Render Markdown with a theme (and the account's theme settings) as publishing would; nothing is saved."""
    html, error = _render_preview(body["markdown"], body["themeTemplate"], body["publicAccount"])
    if error:
        raise ValidationFailed(error, {"themeTemplate": [error]})
    return {"html": html}


# The feedback area is imported where used: the review pages do not depend on it.
FEEDBACK_FILTERS = ("status", "type", "appName", "platform", "appVersion", "keyword", "from", "to", "page")


@bp.get("/feedback")
@admin_required("feedback")
def feedback_list():
    """Feedback with filters, whole-table counts per status and page numbers."""
    args = _clean(request.args, FEEDBACK_FILTERS)
    result, errors, message = None, {}, None
    try:
        result = feedback_queries.list_feedbacks(load(FeedbackListQuerySchema, {**args, "pageSize": PAGE_SIZE},
                                                      unknown=EXCLUDE, where="query"))
    except ValidationFailed as err:
        errors, message = dict(err.details), err.message
    shown = {name: args.get(name, "") for name in FEEDBACK_FILTERS}
    shown["status"] = shown["status"] or "all"
    types = [t.strip() for t in str(current_app.config["FEEDBACK_TYPES"]).split(",") if t.strip()]
    return render_template("feedback_list.html", result=result, errors=errors, message=message, shown=shown,
                           types=types)


@bp.get("/feedback/<feedback_id>")
@admin_required("feedback")
def feedback_detail(feedback_id):
    """One feedback with its attachments (screenshots shown) and the status form."""
    return render_template("feedback_detail.html", feedback=feedback_queries.get_feedback(feedback_id))
