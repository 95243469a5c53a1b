"""The service's HTTP API as the tools need it: one call each, errors kept as the service sent them."""

import base64
import binascii
import errno
import json
import os
import re
import stat
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from rules.limits import MAX_UPLOAD_BYTES, mib

TIMEOUT = (5, 60)  # connect, read: a create may render a long body
_HEADER_VALUE = re.compile(r"[!-~](?:[ -~]*[!-~])?")


@dataclass
class ApiError(Exception):
    """An answer other than 2xx: the service's error code, message and details (docs/api.md §2)."""

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "code": self.code, "message": self.message, "details": self.details}

    @classmethod
    def invalid(cls, message: str, name: str, problem: str) -> "ApiError":
        """A 400 validation_error about the argument `name`, as the service words its own."""
        return cls(400, "validation_error", message, {name: [problem]})


class ReviewApi:
    def __init__(
        self, base_url: str, token: str, session: requests.Session | None = None, upload_root: str | None = None
    ):
        if not base_url or not token:
            raise ValueError("set REVIEW_BASE_URL (the service's address) and REVIEW_AGENT_TOKEN")
        self.base_url, self.token = base_url.rstrip("/"), token
        self.session = session or requests.Session()
        self.upload_root = Path(upload_root or os.getcwd()).resolve()
        if not self.upload_root.is_dir():
            raise ValueError(f"MCP_UPLOAD_ROOT {self.upload_root} is not a folder")

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request with the agent token, redirects not followed; no answer at all raises ApiError."""
        headers = {"x-review-agent-token": self.token, **kwargs.pop("headers", {})}
        try:
            return self.session.request(
                method, self.base_url + path, headers=headers, timeout=TIMEOUT, allow_redirects=False, **kwargs
            )
        except requests.RequestException as exc:
            raise ApiError(
                0, "service_unreachable", f"the service at {self.base_url} did not answer ({type(exc).__name__})"
            ) from None

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._request(method, path, **kwargs)
        body = _json_or_none(response)
        if 200 <= response.status_code < 300 and body is not None:
            return body
        raise _api_error(response.status_code, body)

    def dataset(self, filters: dict[str, Any], limit: int) -> list[Any]:
        """The first `limit` lines of GET /api/review/dataset, each as its JSON value, read as they arrive."""
        response = self._request("GET", "/api/review/dataset", params={**filters, "limit": limit}, stream=True)
        with response:
            if response.status_code != 200:
                raise _api_error(response.status_code, _json_or_none(response))
            try:
                given = (line for line in response.iter_lines() if line.strip())
                lines = [json.loads(line) for line in islice(given, limit)]
            except (ValueError, requests.RequestException):
                raise ApiError(
                    response.status_code, "unexpected_answer", "the dataset stream broke off mid-line; ask again"
                ) from None
        return lines

    def upload_image(
        self,
        *,
        path: str | None = None,
        content_base64: str | None = None,
        file_name: str | None = None,
        scope: str = "review",
    ) -> dict[str, Any]:
        if (path is None) == (content_base64 is None):
            raise ApiError.invalid(
                "give either path or base64, not both or neither", "path", "path or base64 is required"
            )
        if path is not None:
            data = read_upload(self.upload_root, path)
            file_name = file_name or os.path.basename(path)
        else:
            try:
                data = base64.b64decode(content_base64 or "", validate=True)
            except (binascii.Error, ValueError):
                raise ApiError.invalid("base64 is not valid base64", "base64", "not valid base64") from None
        return self._call(
            "POST", "/api/assets/upload", data={"scope": scope}, files={"file": (file_name or "image", data)}
        )

    def create_task(self, body: dict[str, Any], idempotency_key: str | None = None) -> Any:
        headers = {"Idempotency-Key": _header(idempotency_key, "idempotencyKey")} if idempotency_key else {}
        return self._call("POST", "/api/review/agent/tasks", json=body, headers=headers)

    def get_task(self, task_id: str) -> Any:
        return self._call("GET", f"/api/review/agent/tasks/{_segment(task_id)}")

    def task_stats(self, task_id: str) -> Any:
        return self._call("GET", f"/api/review/tasks/{_segment(task_id)}/stats")

    def task_comments(self, task_id: str) -> Any:
        return self._call("GET", f"/api/review/agent/tasks/{_segment(task_id)}/comments")

    def propose_reply(self, task_id: str, comment_id: str, content: str) -> Any:
        path = f"/api/review/agent/tasks/{_segment(task_id)}/comments/{_segment(comment_id)}/proposals"
        return self._call("POST", path, json={"content": content})

    def list_tasks(self, filters: dict[str, Any]) -> Any:
        return self._call("GET", "/api/review/agent/tasks", params={k: v for k, v in filters.items() if v is not None})

    def propose_edition(self, account: str, task_ids: list[str]) -> Any:
        return self._call("POST", "/api/editions", json={"account": account, "taskIds": task_ids})

    def get_edition(self, edition_id: str) -> Any:
        return self._call("GET", f"/api/editions/{_segment(edition_id)}")

    def patch_elements(self, task_id: str, elements: dict[str, Any], if_match: str | None = None) -> Any:
        headers = {"If-Match": _header(if_match, "ifMatch")} if if_match else {}
        return self._call(
            "PATCH", f"/api/review/agent/tasks/{_segment(task_id)}/elements", json=elements, headers=headers
        )


def _header(value: Any, name: str) -> str:
    """`value` as a header carries it: printable ASCII, no space at either end (HTTP cannot send "键" or a line
    break, and requests refuses a leading space; sent, the first was an internal error and the others looked
    like a service that did not answer)."""
    if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
        raise ApiError.invalid(f"{name} must be printable ASCII without spaces at its ends", name, "not a header value")
    return value


def _json_or_none(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _api_error(status: int, body: Any) -> ApiError:
    """The service's JSON error (docs/api.md §2) as an ApiError."""
    error = (body or {}).get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ApiError(status, "unexpected_answer", f"the service answered HTTP {status} without a JSON error")
    return ApiError(status, str(error.get("code")), str(error.get("message")), dict(error.get("details") or {}))


def read_upload(root: Path, path: str, limit: int = MAX_UPLOAD_BYTES) -> bytes:
    """The bytes of a regular file under `root` (MCP_UPLOAD_ROOT), at most `limit` of them; docs/api.md §16 "MCP
    over HTTP" says how the path is opened. Nothing outside the root is opened or looked at."""
    parts = _parts_under(root, path)
    fd = _open_beneath(root, parts, path)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):  # a device such as /dev/zero, a FIFO, a folder
            raise ApiError.invalid(f"{path} is not a regular file", "path", "not a regular file")
        # The size is checked before reading, and the read stops one byte past the limit: a file that
        # grows, or whose size is not what stat says (/proc), can never fill the memory.
        data = b"" if status.st_size > limit else _read_at_most(fd, limit + 1)
    finally:
        os.close(fd)
    if status.st_size > limit or len(data) > limit:
        raise ApiError(
            413, "payload_too_large", f"{path} is larger than the {mib(limit)} an image may be", {"path": ["too large"]}
        )
    return data


def _outside(root: Path) -> ApiError:
    message = f"path must name a file under MCP_UPLOAD_ROOT ({root}); symlinks are not followed"
    return ApiError.invalid(message, "path", "not under MCP_UPLOAD_ROOT")


def _parts_under(root: Path, path: str) -> list[str]:
    """The path's components below the root, `..` applied to the words alone (nothing is looked at)."""
    if "\0" in path:
        raise _outside(root)
    relative = os.path.relpath(os.path.normpath(root / path), root)  # root / an absolute path is that path
    if relative == ".." or relative.startswith("../"):
        raise _outside(root)
    return [] if relative == "." else relative.split("/")


def _open_beneath(root: Path, parts: list[str], path: str) -> int:
    """A descriptor of root/parts, each component opened relative to the one before with O_NOFOLLOW."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for number, part in enumerate(parts):
            last = number == len(parts) - 1
            # O_NONBLOCK: a FIFO cannot hang us; a folder on the way must be one (O_DIRECTORY).
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                following = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(part, fd)):
                    raise _outside(root) from None  # a symlink, wherever it points
                raise ApiError.invalid(
                    f"cannot read {path}: {exc.strerror}", "path", exc.strerror or "unreadable"
                ) from None
            os.close(fd)
            fd = following
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(name: str, folder: int) -> bool:
    """Whether `name` in the folder open as `folder` is a symlink (O_DIRECTORY says ENOTDIR for one)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_at_most(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _segment(value: str) -> str:
    return quote(str(value), safe="")
