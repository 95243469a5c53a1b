"""Parts of the OpenAPI document no route declares: the overview, the agent webhooks, empty query
parameters, and OpenAPI 3.0's reading of nullable schemas (blueprints/apidoc.py assembles the document)."""
from rules.limits import duration
from rules.vocabulary import DEFAULT_WEBHOOK_EVENTS
from services.settings.values import DEFAULT_RETRY_DELAYS

# Response headers, each declared once; blueprints/apidoc.py says which operations send them.
RESPONSE_HEADERS: dict[str, dict] = {
    "ETag": {"description": 'The task\'s (current) version in quotes ("3"); send it back as If-Match',
             "required": True, "schema": {"type": "string"}},
    "Location": {"description": "The created task's address (201), or where to go next (303)",
                 "required": True, "schema": {"type": "string"}},
    "Idempotent-Replayed": {"description": "Sent on the stored answer to a repeated Idempotency-Key",
                            "schema": {"type": "string", "enum": ["true"]}},
    "X-Total-Count": {"description": "Tasks matching the filters, over all pages",
                      "required": True, "schema": {"type": "integer", "minimum": 0}},
    "Link": {"description": '<address of the next page>; rel="next", only when more tasks match',
             "schema": {"type": "string"}},
    "Retry-After": {"description": "Whole seconds to wait before trying again",
                    "required": True, "schema": {"type": "integer", "minimum": 0}},
}

OVERVIEW = """\
Credentials: the agent sends `x-review-agent-token`; client apps send `x-feedback-client-token`
(it names their channel); administrators sign in with `POST /api/auth/login` (form or JSON
`{username, password, next?}`), which answers 303 with the `review_admin_session` cookie.

Errors are JSON `{"error": {"code", "message", "details"}}` (see ErrorBody). A task carries
`version`, sent as `ETag`; send it back as `If-Match` on a write and a 412 tells you the task moved
on (read it again). Every answer carries `X-Request-Id`, also written to the service log.

An agent learns about rejections from the `review_task.rejected` webhook (`x-webhooks` below), or
by listing `GET /api/review/agent/tasks?status=rejected_rework`. REVIEW_AGENT_WEBHOOK_EVENTS adds
the outcome events `review_task.approved`, `review_task.published` and `review_task.publish_failed`;
one task's events arrive in the order they happened.
"""
WEBHOOK_DESCRIPTION = """\
Standard Webhooks: the signature is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`
with REVIEW_AGENT_WEBHOOK_SECRET as the key (`whsec_` + base64: the decoded bytes; any other string:
its UTF-8 bytes). Delivery is at least once: a failure is retried after {delays}, after a restart
too, with the same `webhook-id`, so de-duplicate on it.
`rejectedElements` empty means the whole task was rejected: then any field may be patched, and the
first valid PATCH returns the task to review. Each delivery is recorded in the task's timeline
(`agent_notified`, `agent_notification_failed`) without changing its version.
"""
WEBHOOK_HEADERS = {
    "webhook-id": "the message id, the same on every retry",
    "webhook-timestamp": "Unix seconds of this attempt",
    "webhook-signature": "v1,<base64 HMAC-SHA256>; only when a secret is set",
}


def allow_empty_queries(document):
    """Every query parameter says `allowEmptyValue`: schemas.common.QuerySchema reads an empty one as
    not given (a plain HTML form sends `?type=`)."""
    for operations in document["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if isinstance(parameter, dict) and parameter.get("in") == "query":
                    parameter["allowEmptyValue"] = True
    return document


NULL_ONLY = {"type": "object", "nullable": True, "enum": [None]}  # OpenAPI 3.0 has no type null


def strict_nullable(node):
    """apispec writes a nullable nested schema as anyOf [{type: object, nullable}, {$ref}] for OpenAPI 3.0,
    whose first branch admits any object; anyOf [{$ref}, null only] keeps the nested schema's rules.
    A nullable oneOf/anyOf without a type gets the null-only branch too."""
    if isinstance(node, dict):
        choices = node.get("anyOf")
        loose = {"type": "object", "nullable": True}
        if isinstance(choices, list) and len(choices) == 2 and loose in choices:
            [ref] = [choice for choice in choices if choice != loose]
            if set(ref) == {"$ref"}:
                node = {**node, "anyOf": [ref, NULL_ONLY]}
        for key in ("oneOf", "anyOf"):  # `nullable` without a `type` beside it means nothing in 3.0
            if node.get("nullable") and "type" not in node and NULL_ONLY not in node.get(key, [NULL_ONLY]):
                node = {**{k: v for k, v in node.items() if k != "nullable"}, key: [*node[key], NULL_ONLY]}
        return {key: strict_nullable(value) for key, value in node.items()}
    if isinstance(node, list):
        return [strict_nullable(value) for value in node]
    return node


def webhook(event_type, when, body_schema_ref):
    """The x-webhooks entry of one notification type (services/review/webhooks.py)."""
    delays = ", ".join(duration(seconds) for seconds in DEFAULT_RETRY_DELAYS)
    chosen = ("sent by default" if event_type in DEFAULT_WEBHOOK_EVENTS
              else "sent when REVIEW_AGENT_WEBHOOK_EVENTS names it")
    return {
        "summary": f"Sent to REVIEW_AGENT_WEBHOOK_URL when {when} ({chosen})",
        "description": WEBHOOK_DESCRIPTION.replace("{delays}", delays),
        "parameters": [{"name": name, "in": "header", "required": True, "schema": {"type": "string"},
                        "description": text} for name, text in WEBHOOK_HEADERS.items()],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": body_schema_ref}}},
        "responses": {"2XX": {"description": "Delivered; any other answer, or none within 10 s, is retried"}},
    }
