"""The one exception type services raise; blueprints/errors.py turns it into JSON (docs/api.md §2)."""


class ServiceError(Exception):
    status = 400
    code = "validation_error"

    def __init__(self, message, details=None, *, status=None, code=None, headers=None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        self.headers = headers or {}


def _kind(name: str, status: int, code: str, doc: str) -> type[ServiceError]:
    return type(name, (ServiceError,), {"status": status, "code": code, "__doc__": doc})


# The kinds of failure a service raises, by HTTP status (docs/api.md §2).
ValidationFailed = _kind("ValidationFailed", 400, "validation_error", "A rule is broken; details name the fields.")
Unauthorized = _kind("Unauthorized", 401, "unauthorized", "No valid credentials.")
Forbidden = _kind("Forbidden", 403, "forbidden", "Credentials without the right to this.")
NotFound = _kind("NotFound", 404, "not_found", "No such record.")
PreconditionFailed = _kind("PreconditionFailed", 412, "precondition_failed", "If-Match names an older version.")
PayloadTooLarge = _kind("PayloadTooLarge", 413, "payload_too_large", "The body or a file is over its limit.")
PlatformRefused = _kind(
    "PlatformRefused", 502, "platform_error", "The platform refused the call; details carry its errcode and errmsg."
)
StorageUnavailable = _kind("StorageUnavailable", 500, "storage_unavailable", "Disk or database refused the write.")


class Conflict(ServiceError):
    """409 with a specific code: invalid_state, field_locked, duplicate_feedback, ..."""

    status, code = 409, "invalid_state"


class RateLimited(ServiceError):
    status, code = 429, "rate_limited"

    def __init__(self, message, retry_after, details=None):
        super().__init__(message, details, headers={"Retry-After": str(int(retry_after))})


# Every `error.code` an answer can carry (the OpenAPI enum; tests/api/test_openapi.py checks the code uses no other).
ERROR_CODES = (
    "validation_error",
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "invalid_state",
    "field_locked",
    "publish_in_progress",
    "idempotency_conflict",
    "export_failed",
    "duplicate_feedback",
    "attachment_limit",
    "precondition_failed",
    "payload_too_large",
    "rate_limited",
    "storage_unavailable",
    "internal_error",
    "http_error",
    "no_draft",
    "draft_gone",
    "platform_error",
    "quota_exceeded",
    "in_edition",
    "not_live",
)
