"""The tools of docs/api.md §13, §19 and §20: input schemas generated from the API's own marshmallow schemas."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentmcp.api import ApiError, ReviewApi
from rules.accounts import CODE_PATTERN
from rules.limits import IDEMPOTENCY_KEY_MAX, MAX_DATASET_TOOL_LINES
from schemas.assets import AssetUploadFormSchema
from schemas.editions import EditionCreateSchema
from schemas.openapi import json_schema
from schemas.review.candidates import CreateTaskSchema
from schemas.review.comments import ProposalBodySchema
from schemas.review.dataset import DatasetQuerySchema
from schemas.review.selections import PatchElementsSchema
from schemas.review.task import AgentTaskListQuerySchema

TASK_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "description": "the task's id, as create_review_task returned it",
}
COMMENT_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "description": "the comment's id, as list_comments returned it",
}
EDITION_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "description": "the edition's id, as propose_edition returned it",
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[ReviewApi, dict[str, Any]], Any]


def _with(schema: dict[str, Any], properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """`schema` with further properties the tool itself reads (they are not part of the API body)."""
    return {
        **schema,
        "properties": {**schema.get("properties", {}), **properties},
        "required": [*schema.get("required", []), *required],
    }


def _any_account(schema: dict[str, Any], name: str = "publicAccount") -> dict[str, Any]:
    """publicAccount (or the property `name`) as the service configures it (WECHAT_ACCOUNTS, docs/api.md
    §18): this server may run elsewhere and cannot know the list, so the tool states the codes' form and
    the service names the accounts it has in its 400 answer."""
    properties = dict(schema.get("properties", {}))
    if name in properties:
        account = {k: v for k, v in properties[name].items() if k != "enum"}
        properties[name] = {
            **account,
            "pattern": f"^{CODE_PATTERN}$",
            "description": (
                "the account's code as the service configures it (e.g. silicon-rise, carbon-fitness); another "
                "is refused with 400 naming the accounts it has"
            ),
        }
    return {**schema, "properties": properties}


def _object(properties: dict[str, Any], required: tuple[str, ...], defs: dict[str, Any] | None = None):
    schema = {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}
    return {**schema, "$defs": defs} if defs else schema


def _create(api: ReviewApi, arguments: dict[str, Any]) -> Any:
    body = {key: value for key, value in arguments.items() if key != "idempotencyKey"}
    return api.create_task(body, arguments.get("idempotencyKey"))


def _patch(api: ReviewApi, arguments: dict[str, Any]) -> Any:
    return api.patch_elements(arguments.get("taskId", ""), arguments.get("elements") or {}, arguments.get("ifMatch"))


def _upload(api: ReviewApi, arguments: dict[str, Any]) -> Any:
    return api.upload_image(
        path=arguments.get("path"),
        content_base64=arguments.get("base64"),
        file_name=arguments.get("fileName"),
        scope=arguments.get("scope") or "review",
    )


DATASET_FILTERS = ("format", "from", "to", "account")
DATASET_DEFAULT_LINES = 100


def _dataset(api: ReviewApi, arguments: dict[str, Any]) -> Any:
    limit = arguments.get("limit", DATASET_DEFAULT_LINES)
    if type(limit) is not int or not 1 <= limit <= MAX_DATASET_TOOL_LINES:
        message = f"limit must be a whole number from 1 to {MAX_DATASET_TOOL_LINES}"
        raise ApiError.invalid(message, "limit", f"must be 1 to {MAX_DATASET_TOOL_LINES}")
    filters = {key: arguments[key] for key in DATASET_FILTERS if arguments.get(key) is not None}
    return {"lines": api.dataset(filters, limit)}


def build_tools() -> list[Tool]:
    patch = json_schema(PatchElementsSchema)
    upload = _with(
        json_schema(AssetUploadFormSchema),
        {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "an image file under MCP_UPLOAD_ROOT on the machine "
                "running this server (relative to that folder, or absolute)",
            },
            "base64": {"type": "string", "minLength": 1, "description": "the image's bytes, base64-encoded"},
            "fileName": {"type": "string", "maxLength": 255, "description": "with base64: the file's name"},
        },
    )
    upload["oneOf"] = [{"required": ["path"]}, {"required": ["base64"]}]
    return [
        Tool(
            "upload_image",
            "Upload a PNG, JPEG, GIF or WebP image for a review task (from a path or base64); returns the asset "
            "with assetId and url to use in candidates.",
            upload,
            _upload,
        ),
        Tool(
            "create_review_task",
            "Create a review task with candidate content for a WeChat Official Account (article or image_post). "
            "A repeated idempotencyKey with the same body returns the first answer instead of a second task.",
            _with(
                _any_account(json_schema(CreateTaskSchema)),
                {
                    "idempotencyKey": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": IDEMPOTENCY_KEY_MAX,
                        "description": "any unique string of yours; makes retrying safe",
                    }
                },
            ),
            _create,
        ),
        Tool(
            "get_review_task",
            "Read one review task: status, selections, rejection, publish jobs, timeline, and "
            "`live` (null, or where the article stands on its way to readers: status scheduled, submitting, "
            "publishing, live, failed or canceled, with articleUrl once live and failReason when it failed).",
            _object({"taskId": TASK_ID}, ("taskId",)),
            lambda api, arguments: api.get_task(arguments["taskId"]),
        ),
        Tool(
            "get_task_stats",
            "What readers did with a task's live article: reads, shares, likes, wows (zaikanUser), collections and "
            "comments per day (ascending) and in total, the article's URL, and the last fetch error. The platform "
            "publishes a day's figures the next morning; a task that never went live has no days.",
            _object({"taskId": TASK_ID}, ("taskId",)),
            lambda api, arguments: api.task_stats(arguments["taskId"]),
        ),
        Tool(
            "list_comments",
            "Read what readers wrote under a task's live article, newest first: each comment's id, reader (a "
            "stable pseudonym, never the reader's WeChat id), content, createdAt, featured, removed, the reply an "
            "editor sent (or null) and your proposals with their state (proposed, sent, edited by the editor, "
            "discarded); also whether comments are open and the last fetch. A task never live has none.",
            _object({"taskId": TASK_ID}, ("taskId",)),
            lambda api, arguments: api.task_comments(arguments["taskId"]),
        ),
        Tool(
            "propose_reply",
            "Propose a reply to a reader's comment (commentId from list_comments). It never reaches readers by "
            "itself: an editor sends it, as it is or edited, or answers otherwise. Returns the comment.",
            _with(
                json_schema(ProposalBodySchema), {"taskId": TASK_ID, "commentId": COMMENT_ID}, ("taskId", "commentId")
            ),
            lambda api, arguments: api.propose_reply(arguments["taskId"], arguments["commentId"], arguments["content"]),
        ),
        Tool(
            "export_dataset",
            "What the editors chose, changed and rejected, and what readers did, as training data, oldest decision "
            "first: format raw (one decided task each: candidates, choices, final content, edits, rework with "
            "reasons and before/after, readers' figures, readers' comments with your proposed replies and the "
            "replies sent), sft (prompt and approved article), dpo (preferred and not preferred answers, the "
            "article's and the replies', OpenAI's format), trl-dpo (the same pairs as TRL's prompt/chosen/rejected "
            "message lists) or kto (answers labelled true or false); from/to are dates of the decisions. "
            "Only tasks created with context.prompt give sft, dpo, trl-dpo and kto lines.",
            _with(
                _any_account(json_schema(DatasetQuerySchema, only=("format", "from_", "to", "account")), "account"),
                {
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_DATASET_TOOL_LINES,
                        "default": DATASET_DEFAULT_LINES,
                        "description": "at most this many lines",
                    }
                },
            ),
            _dataset,
        ),
        Tool(
            "propose_edition",
            "Propose today's edition for an account: its published articles (taskIds, in order: the first is the "
            "headline, at most 8) sent to followers as one message once an editor previews and sends it. Returns "
            "the edition (status draft). A task refused is named with the reason (not published yet, already "
            "live, in another edition, an image post).",
            _any_account(json_schema(EditionCreateSchema), "account"),
            lambda api, arguments: api.propose_edition(arguments["account"], arguments["taskIds"]),
        ),
        Tool(
            "get_edition",
            "Read one edition: status (draft, scheduled, sending, sent, failed, canceled), when it is sent, the "
            "counts of followers reached, and each article's URL once sent.",
            _object({"editionId": EDITION_ID}, ("editionId",)),
            lambda api, arguments: api.get_edition(arguments["editionId"]),
        ),
        Tool(
            "list_review_tasks",
            "List review tasks, newest change first (status pending_review unless given; rejected_rework: "
            "those waiting for your rework).",
            _any_account(
                json_schema(AgentTaskListQuerySchema, only=("status", "publicAccount", "live", "updatedSince"))
            ),
            lambda api, arguments: {"tasks": api.list_tasks(arguments)},
        ),
        Tool(
            "patch_task_elements",
            "Rework a rejected task: send new values for the rejected elements only; the task returns to review "
            "once every rejected element has been patched.",
            _object(
                {
                    "taskId": TASK_ID,
                    "elements": {k: v for k, v in patch.items() if k != "$defs"},
                    "ifMatch": {"type": "string", "description": "the task's version, to refuse a stale patch"},
                },
                ("taskId", "elements"),
                patch.get("$defs"),
            ),
            _patch,
        ),
    ]
