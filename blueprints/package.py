"""Task package download (docs/api.md §7) and task deletion (docs/api.md §8); admin session only."""

import os

from flask import Response

from blueprints.bodies import no_body
from blueprints.common import if_match_header, settings, takes_if_match
from blueprints.guards import admin_required
from blueprints.openapi import Blueprint
from schemas.review import DeleteResultSchema
from services.export import build_package
from services.task_delete import delete_task

bp = Blueprint("package", __name__)
CHUNK = 256 * 1024


class _FileChunks:
    """The archive in chunks; close() (called by Response.close) closes the file first."""

    def __init__(self, path):
        self._handle = open(path, "rb")  # closed in close()

    def __iter__(self):
        while chunk := self._handle.read(CHUNK):
            yield chunk

    def close(self):
        self._handle.close()


@bp.get("/api/review/tasks/<task_id>/package")
@admin_required("review")
@bp.answers(200, media="application/zip")
def download_package(task_id):
    """Download the task's final content as review-{taskId}.zip (manuscript.md and images/)."""
    package = build_package(task_id, settings())
    try:
        response = Response(_FileChunks(package.path), mimetype="application/zip")
        response.content_length = os.path.getsize(package.path)
    except BaseException:
        package.cleanup()
        raise
    # Response.close() runs when the server closes the response: after the last chunk, or when the
    # client went away. (send_file is not used: its pass-through iterator skips these callbacks.)
    response.call_on_close(package.cleanup)
    # Generated ids only (URL-safe), so the quoted form needs no escaping.
    response.headers["Content-Disposition"] = f'attachment; filename="{package.download_name}"'
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@bp.delete("/api/review/tasks/<task_id>")
@admin_required("review")
@no_body
@bp.answers(200, DeleteResultSchema)
@takes_if_match
def delete(task_id):
    """Delete the task with its jobs and timeline, then its unshared review files (best effort)."""
    result = delete_task(task_id, settings(), if_match=if_match_header())
    return DeleteResultSchema().dump(result)
