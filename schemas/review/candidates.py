"""Task creation: candidates per content type, body options, image groups (docs/api.md §4)."""

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from rules.limits import (
    CREATE_MAX_BYTES,
    MAX_CONTENT,
    MAX_ID,
    MAX_LIST,
    MAX_MODEL,
    MAX_PROMPT,
    MAX_TEXT,
    MAX_TOPIC,
    MAX_URL,
)
from rules.vocabulary import CANDIDATE_KEYS, CONTENT_TYPES
from schemas.common import account
from schemas.review.refs import AssetIdSchema, CommentSettingsSchema, not_blank


def _strings(max_length, description, required=False):
    return fields.List(
        fields.String(validate=[validate.Length(max=max_length), not_blank]),
        required=required,
        validate=validate.Length(max=MAX_LIST),
        metadata={"description": description},
    )


# Candidate images are stored as sent; only asset urls can be chosen at approval (docs/api.md §4).
APPROVABLE = (
    "the `url` of an asset (POST /api/assets/upload, or GET /api/assets?scope=library) to be "
    "approvable: other web addresses are stored but refused when a reviewer selects them, and a "
    "local path that is no asset is refused (400)"
)


class BodyOptionSchema(Schema):
    """A structured body candidate; plain strings are refused."""

    error_messages = {
        "type": "a body option is an object {id, outline, focuses, content}; plain strings are no longer accepted"
    }

    id = fields.String(
        required=True,
        validate=[validate.Length(max=MAX_ID), not_blank],
        metadata={"description": "stable across retries and rework"},
    )
    outline = fields.String(
        required=True,
        validate=not_blank,
        error_messages={"invalid": "outline is a single string; join several segments with |"},
        metadata={"description": "one non-empty string, segments joined with |; kept unchanged"},
    )
    focuses = fields.List(
        fields.String(validate=validate.Length(max=MAX_TEXT)), required=True, validate=validate.Length(max=MAX_LIST)
    )
    content = fields.String(
        required=True,
        validate=[validate.Length(max=MAX_CONTENT), not_blank],
        metadata={"description": f"Markdown draft; its image links: {APPROVABLE}"},
    )


class BodyImageCandidateSchema(Schema):
    placeholderId = fields.String(required=True, validate=[validate.Length(max=MAX_ID), not_blank])
    options = _strings(MAX_URL, f"image URLs to choose from for this placeholder; {APPROVABLE}", required=True)


class ImageGroupSchema(Schema):
    """Images an image post may use; only id, label and images (coverCrop is chosen at review)."""

    id = fields.String(required=True, validate=[validate.Length(max=MAX_ID), not_blank])
    label = fields.String(validate=validate.Length(max=MAX_TEXT))
    images = fields.List(
        fields.Nested(AssetIdSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_LIST),
        metadata={"description": "existing asset ids"},
    )


class ArticleCandidatesSchema(Schema):
    """Candidates of an article task."""

    authors = _strings(MAX_TEXT, "article")
    titles = _strings(MAX_TEXT, "article and image_post")
    summaries = _strings(MAX_TEXT, "article")
    bodyOptions = fields.List(
        fields.Nested(BodyOptionSchema),
        validate=validate.Length(max=MAX_LIST),
        metadata={"description": "article; at least one; ids unique"},
    )
    coverImages = _strings(MAX_URL, f"article; cover image URLs; {APPROVABLE}")
    bodyImageCandidates = fields.List(
        fields.Nested(BodyImageCandidateSchema),
        validate=validate.Length(max=MAX_LIST),
        metadata={"description": "article"},
    )


class ImagePostCandidatesSchema(Schema):
    """Candidates of an image_post task: titles, descriptions and image groups are required."""

    titles = _strings(MAX_TEXT, "article and image_post")
    descriptions = _strings(MAX_TEXT, "image_post")
    imageGroups = fields.List(
        fields.Nested(ImageGroupSchema), validate=validate.Length(max=MAX_LIST), metadata={"description": "image_post"}
    )
    commentSettings = fields.List(
        fields.Nested(CommentSettingsSchema),
        validate=validate.Length(max=MAX_LIST),
        metadata={"description": "image_post; never changes the review page default"},
    )


def _duplicates(items, key):
    seen, errors = set(), {}
    for index, item in enumerate(items or []):
        if item[key] in seen:
            errors[index] = {key: [f"duplicate {key} {item[key]!r}; {key} values must be unique"]}
        seen.add(item[key])
    return errors


class CandidatesSchema(ArticleCandidatesSchema, ImagePostCandidatesSchema):
    """Every candidate field; each content type accepts only its own (see descriptions)."""

    @validates_schema
    def unique_ids(self, data, **kwargs):
        unique = (("bodyOptions", "id"), ("imageGroups", "id"), ("bodyImageCandidates", "placeholderId"))
        errors = {name: found for name, key in unique if (found := _duplicates(data.get(name), key))}
        if errors:
            raise ValidationError(errors)


REQUIRED_CANDIDATES = {
    "article": {},  # titles alone will do: the body may come later by PATCH, or from the reviewer
    "image_post": {
        "titles": "an image_post needs at least one title to choose from",
        "descriptions": "an image_post needs at least one description to choose from",
        "imageGroups": "an image_post needs at least one image group",
    },
}


class TaskContextSchema(Schema):
    """Where the content came from, as the agent says (docs/api.md §20): stored, returned and exported."""

    prompt = fields.String(
        allow_none=True,
        validate=[validate.Length(max=MAX_PROMPT), not_blank],
        metadata={
            "description": "what the agent was asked; a task with one is training data (GET /api/review/dataset)"
        },
    )
    model = fields.String(
        allow_none=True,
        validate=[validate.Length(max=MAX_MODEL), not_blank],
        metadata={"description": "the model that wrote the candidates"},
    )


class CreateTaskSchema(Schema):
    """POST /api/review/agent/tasks."""

    MAX_BYTES = CREATE_MAX_BYTES  # the body's limit (blueprints/openapi.py's Parser), not JSON_MAX_BYTES

    publicAccount = account(required=True)
    topic = fields.String(required=True, validate=[validate.Length(max=MAX_TOPIC), not_blank])
    contentType = fields.String(
        load_default="article", validate=validate.OneOf(CONTENT_TYPES), metadata={"description": "absent means article"}
    )
    candidates = fields.Nested(CandidatesSchema, required=True)
    externalContentId = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=128),
        metadata={"description": "the agent's own id; stored and returned"},
    )
    context = fields.Nested(
        TaskContextSchema,
        load_default=None,
        allow_none=True,
        metadata={"description": "the prompt and model the candidates came from; stored, returned and exported"},
    )

    @validates_schema
    def fits_content_type(self, data, **kwargs):
        content_type, candidates = data["contentType"], data["candidates"]
        own = CANDIDATE_KEYS[content_type]
        errors = {key: [f"not a candidate field of {content_type} tasks"] for key in candidates if key not in own}
        if not any(candidates.get(key) for key in own):
            errors["_schema"] = ["give at least one kind of non-empty candidate content"]
        for key, message in REQUIRED_CANDIDATES[content_type].items():
            if key not in errors and not candidates.get(key):
                errors[key] = [message]
        if errors:
            raise ValidationError({"candidates": errors})
