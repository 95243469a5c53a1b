"""Body drafts and manual overrides (docs/api.md §4 "Selections, references, overrides")."""

from difflib import SequenceMatcher
from typing import Any

from rules.vocabulary import OVERRIDE_KEYS
from services.rendering import THEMES, merged_variables
from services.review.validation import REF_KEYS, REF_LIST_KEYS, check_markdown_links, check_ref, join, same_value


def body_options(task: Any) -> dict[str, dict[str, Any]]:
    return {option["id"]: option for option in (task.candidates or {}).get("bodyOptions") or []}


def _theme_problems(draft, problems):
    name = draft.get("themeTemplate")
    if name is not None and name not in THEMES:
        problems.add("bodyDraft.themeTemplate", f"unknown theme template; choose one of: {', '.join(THEMES)}")
        return
    if draft.get("themeConfig"):
        try:
            merged_variables(name or "default", draft["themeConfig"])
        except ValueError as err:
            problems.add("bodyDraft.themeConfig.cssVariables", str(err))


def _draft(option, markdown, keep_from=None):
    """A draft from body `option`; with None, a body written by hand on a task without body options."""
    draft = {
        "markdown": markdown,
        "sourceBodyCandidateId": option["id"] if option else None,
        "sourceBodyCandidate": option["content"] if option else None,
        "bodyEditedFromCandidate": option is None or markdown != option["content"],
    }
    for key in ("themeTemplate", "themeConfig"):
        if (keep_from or {}).get(key) is not None:
            draft[key] = keep_from[key]
    return draft


def decision_body_draft(
    assets: Any, task: Any, selections: Any, submitted: dict[str, Any] | None, problems: Any, *, required: bool
) -> dict[str, Any] | None:
    """The bodyDraft a decision saves: the submitted one (checked), the stored one when it still
    matches selections.body, or one derived from the candidate whose content equals selections.body."""
    if task.content_type != "article":
        if submitted is not None:
            problems.add("bodyDraft", "image_post tasks have no body draft")
        return None
    options, body, stored = body_options(task), (selections or {}).get("body"), task.body_draft
    if submitted is not None:
        source_id = submitted["sourceBodyCandidateId"]
        option = options.get(source_id) if source_id is not None else None
        if option is None and (source_id is not None or options):
            problems.add(
                "bodyDraft.sourceBodyCandidateId",
                "no body option of this task has this id"
                if source_id
                else "required: name the body option the body comes from (null only when the task has no body options)",
            )
            return None
        markdown = submitted["markdown"]
        edited = option is None or markdown != option["content"]
        if submitted.get("sourceBodyCandidate") not in (None, option["content"] if option else None):
            problems.add("bodyDraft.sourceBodyCandidate", "must be the content of the source body option, unchanged")
        if submitted.get("bodyEditedFromCandidate") not in (None, edited):
            problems.add(
                "bodyDraft.bodyEditedFromCandidate",
                f"must be {str(edited).lower()}: the markdown {'differs from' if edited else 'equals'} "
                "the source body option",
            )
        if body is not None and markdown != body:
            problems.add("bodyDraft.markdown", "must equal selections.body")
        check_markdown_links(assets, markdown, "bodyDraft.markdown", problems)
        _theme_problems(submitted, problems)
        return _draft(option, markdown, submitted)
    if body is None:
        return stored
    if stored and stored.get("markdown") == body:
        return stored
    for option in options.values():
        if option["content"] == body:
            return _draft(option, body, stored)
    if not options:  # a task created with titles only: the body is the reviewer's own
        return _draft(None, body, stored)
    if required:
        problems.add(
            "bodyDraft",
            "required: selections.body is not exactly the content of one body option, "
            "so send a bodyDraft naming its sourceBodyCandidateId",
        )
    return stored


def patch_body_draft(assets: Any, task: Any, body: str, source_id: str | None, problems: Any) -> dict[str, Any] | None:
    """The bodyDraft after an agent PATCH of `body` (source: given id, saved draft, or the only option)."""
    options, stored = body_options(task), task.body_draft
    check_markdown_links(assets, body, "body", problems)
    if not options and source_id is None:  # a task created without body options: no source to name
        return _draft(None, body, stored)
    if source_id is None:
        if stored and stored.get("sourceBodyCandidateId") in options:
            source_id = stored["sourceBodyCandidateId"]
        elif len(options) == 1:
            source_id = next(iter(options))
        else:
            problems.add(
                "sourceBodyCandidateId",
                "required: this task has several body options and no saved "
                "bodyDraft, so name the option the body was written from",
            )
            return None
    option = options.get(source_id)
    if option is None:
        problems.add("sourceBodyCandidateId", "no body option of this task has this id")
        return None
    return _draft(option, body, stored)


def check_overrides(
    assets: Any,
    task: Any,
    overrides: dict[str, Any] | None,
    selections: Any,
    draft: dict[str, Any] | None,
    problems: Any,
) -> None:
    """Keys of the content type; each value equals the final selection (body: bodyDraft.markdown)."""
    selections = selections or {}
    for key, entry in (overrides or {}).items():
        path = join("manualOverrides", key)
        if key not in OVERRIDE_KEYS[task.content_type]:
            problems.add(path, f"not an override key of {task.content_type} tasks")
        elif key == "body":
            if draft is None:
                problems.add(path, "a body override needs a bodyDraft")
                continue
            if entry["value"] != draft["markdown"]:
                problems.add(join(path, "value"), "must equal bodyDraft.markdown")
            if entry["basedOnCandidateId"] != draft["sourceBodyCandidateId"]:
                problems.add(join(path, "basedOnCandidateId"), "must equal bodyDraft.sourceBodyCandidateId")
            if not draft["bodyEditedFromCandidate"]:
                problems.add(
                    path,
                    "an overridden body needs bodyDraft.bodyEditedFromCandidate true "
                    "(the markdown must differ from the source body option)",
                )
        elif key not in selections:
            problems.add(path, f"overrides selections.{key}, which is not selected")
        elif key in REF_KEYS or key in REF_LIST_KEYS:
            values = [entry["value"]] if key in REF_KEYS else entry["value"]
            for index, ref in enumerate(values):
                check_ref(assets, ref, join(path, "value" if key in REF_KEYS else f"value.{index}"), problems)
            if not same_value(assets, key, entry["value"], selections[key]):
                problems.add(join(path, "value"), f"must equal selections.{key}")
        elif entry["value"] != selections[key]:
            problems.add(join(path, "value"), f"must equal selections.{key}")


TEXT_CANDIDATES = {"title": "titles", "summary": "summaries", "description": "descriptions"}


# Compared on their openings: the cost grows with the product of the lengths, and this runs inside
# the decision's write transaction.
SIMILARITY_PREFIX = 200


def _closest(options, value):
    head = value[:SIMILARITY_PREFIX]
    return max(options, key=lambda option: SequenceMatcher(None, option[:SIMILARITY_PREFIX], head).ratio(), default="")


def _edit_of(assets, task, key, value, draft):
    """The override recording `value` as a reviewer's edit of the candidates, or None when it is a candidate."""
    candidates = task.candidates or {}
    if key in TEXT_CANDIDATES:
        options = candidates.get(TEXT_CANDIDATES[key]) or []
        return None if value in options else {"basedOn": _closest(options, value), "value": value}
    if key == "body":  # a body with no source option is the reviewer's own, not an edit of a candidate
        edited = draft["bodyEditedFromCandidate"] and draft["sourceBodyCandidateId"] is not None
        return {"basedOnCandidateId": draft["sourceBodyCandidateId"], "value": value} if edited else None
    if key == "coverImage":
        options = candidates.get("coverImages") or []
        if any(same_value(assets, key, option, value) for option in options):
            return None
        return {"basedOn": options[0] if options else None, "value": value}
    if key == "bodyImages":
        placeholders = candidates.get("bodyImageCandidates") or []
        if len(value) == len(placeholders) and all(
            assets.identity(ref) in {assets.identity(option) for option in placeholder["options"]}
            for ref, placeholder in zip(value, placeholders, strict=True)
        ):
            return None
        return {"basedOn": [p["options"][0] for p in placeholders] or None, "value": value}
    groups = candidates.get("imageGroups") or []  # images
    if any(same_value(assets, key, group["images"], value) for group in groups):
        return None
    return {"basedOn": None, "value": value}


def complete_overrides(
    assets: Any, task: Any, selections: Any, draft: dict[str, Any] | None, given: dict[str, Any] | None, skip: Any = ()
) -> dict[str, Any] | None:
    """`given` plus an override for every reviewer edit it leaves out (decision rule 8, as the rulings in
    docs/review-states.md say); keys in `skip` (being rejected) get none."""
    overrides = dict(given or {})
    stored = {**(task.selections or {}), "body": (task.body_draft or {}).get("markdown")}
    for key in OVERRIDE_KEYS[task.content_type]:
        value = (draft or {}).get("markdown") if key == "body" else (selections or {}).get(key)
        if key in overrides or key in skip or value is None:
            continue
        if same_value(assets, key, value, stored.get(key)):
            saved = (task.manual_overrides or {}).get(key)
            if saved is not None and same_value(assets, key, saved["value"], value):
                overrides[key] = saved
            continue
        edit = _edit_of(assets, task, key, value, draft)
        if edit is not None:
            overrides[key] = edit
    return overrides or None
