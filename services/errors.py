"""The one exception type services raise; blueprints/errors.py turns it into JSON (CONTRACT §2)."""


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


class ValidationFailed(ServiceError):
    status, code = 400, "validation_error"


class Unauthorized(ServiceError):
    status, code = 401, "unauthorized"


class Forbidden(ServiceError):
    status, code = 403, "forbidden"


class NotFound(ServiceError):
    status, code = 404, "not_found"


class Conflict(ServiceError):
    """409 with a specific code: invalid_state, field_locked, duplicate_feedback, ..."""

    status, code = 409, "invalid_state"


class PreconditionFailed(ServiceError):
    status, code = 412, "precondition_failed"


class PayloadTooLarge(ServiceError):
    status, code = 413, "payload_too_large"


class RateLimited(ServiceError):
    status, code = 429, "rate_limited"

    def __init__(self, message, retry_after, details=None):
        super().__init__(message, details, headers={"Retry-After": str(int(retry_after))})


class StorageUnavailable(ServiceError):
    status, code = 500, "storage_unavailable"


# Every `error.code` an answer can carry (the OpenAPI enum; tests/test_openapi.py checks the code uses no other).
ERROR_CODES = (
    "validation_error", "unauthorized", "forbidden", "not_found", "method_not_allowed", "invalid_state",
    "field_locked", "publish_in_progress", "idempotency_conflict", "export_failed", "duplicate_feedback",
    "attachment_limit", "precondition_failed", "payload_too_large", "rate_limited", "storage_unavailable",
    "internal_error", "http_error",
)
