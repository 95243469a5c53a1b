"""Edition routes (/api/editions; docs/api.md §21): the agent proposes the day's message, editors order,
preview and send it. The agent token may create, read and change a draft; only editors send."""

from flask import g
from werkzeug.routing import BaseConverter

from blueprints.common import settings
from blueprints.guards import admin_required, agent_or_admin
from blueprints.openapi import Blueprint
from schemas.editions import (
    EditionCreateSchema,
    EditionListQuerySchema,
    EditionPatchSchema,
    EditionPreviewSchema,
    EditionSchema,
    EditionSendSchema,
    EditionTagsQuerySchema,
    FollowerTagsSchema,
)
from services import editions

bp = Blueprint("editions", __name__)


class EditionId(BaseConverter):
    """ed_ and 22 URL-safe characters (rules.ids.new_id): /api/editions/tags is not an edition."""

    regex = r"ed_[A-Za-z0-9_-]{1,40}"


@bp.record_once
def _converter(state):  # before the routes bind
    state.app.url_map.converters["edition"] = EditionId


@bp.post("/api/editions")
@agent_or_admin("review")
@bp.arguments(EditionCreateSchema)
@bp.answers(201, EditionSchema)
def create_edition(body):
    """Propose an edition: the account's published articles in order (the first is the headline)."""
    return editions.propose(body["account"], body["taskIds"], g.actor[1], settings()), 201


@bp.get("/api/editions")
@agent_or_admin("review")
@bp.arguments(EditionListQuerySchema, location="query")
@bp.answers(200, EditionSchema(many=True))
def list_editions(query):
    """Editions, newest first (at most 200)."""
    return editions.list_editions(query.get("account"), query.get("status"))


@bp.get("/api/editions/tags")
@admin_required("review")
@bp.arguments(EditionTagsQuerySchema, location="query")
@bp.answers(200, FollowerTagsSchema)
def follower_tags(query):
    """The account's follower tags (the platform's tags/get), to send an edition to one."""
    return {"tags": editions.follower_tags(query["account"], settings())}


@bp.get("/api/editions/<edition:edition_id>")
@agent_or_admin("review")
@bp.answers(200, EditionSchema)
def get_edition(edition_id):
    """One edition: its status, counts and each article's address once sent."""
    return editions.get_edition(edition_id)


@bp.patch("/api/editions/<edition:edition_id>")
@agent_or_admin("review")
@bp.arguments(EditionPatchSchema)
@bp.answers(200, EditionSchema)
def reorder_edition(body, edition_id):
    """Choose or order a draft edition's articles again."""
    return editions.reorder(edition_id, body["taskIds"])


@bp.delete("/api/editions/<edition:edition_id>")
@admin_required("review")
@bp.answers(204, media=None, description="Deleted")
def delete_edition(edition_id):
    """Delete a draft, canceled or failed edition (its tasks and the platform are untouched)."""
    editions.delete_edition(edition_id)
    return "", 204


@bp.post("/api/editions/<edition:edition_id>/preview")
@admin_required("review")
@bp.arguments(EditionPreviewSchema)
@bp.answers(200, EditionSchema)
def preview_edition(body, edition_id):
    """Build the combined draft and send it to one WeChat user's phone (message/mass/preview)."""
    return editions.preview(edition_id, body["wechatId"], settings())


@bp.post("/api/editions/<edition:edition_id>/send")
@admin_required("review")
@bp.arguments(EditionSendSchema)
@bp.answers(202, EditionSchema)
def send_edition(body, edition_id):
    """Send to followers now, at `at`, or to one tag; 409 quota_exceeded past the account's quota."""
    return editions.schedule(edition_id, body["at"], body["tagId"], body["ignoreReprint"], g.actor[1], settings()), 202


@bp.delete("/api/editions/<edition:edition_id>/send")
@admin_required("review")
@bp.answers(200, EditionSchema)
def cancel_edition(edition_id):
    """Cancel a scheduled send (409 once it began)."""
    return editions.cancel(edition_id)
