"""What a decision card says (docs/api.md §22 "Cards"), for Feishu (card JSON 2.0) and WeCom (a
button_interaction template card). Values from the agent are plain text on both platforms."""

from typing import Any

from flask_babel import gettext

from models.review import ReviewTask, TimelineEvent
from rules.ids import parse_iso
from rules.labels import ACTION_LABELS, STATUS_LABELS
from services.settings.team import TeamSettings

BUTTONS = ("approve_and_publish", "approve_without_publish", "reject_rework")
_FEISHU_STYLE = {"approve_and_publish": "primary", "approve_without_publish": "default", "reject_rework": "danger"}


def _when(at: str | None, team_zone: Any) -> str:
    return parse_iso(at).astimezone(team_zone).strftime("%Y-%m-%d %H:%M") if at else ""


def verdict(task: ReviewTask, zone: Any) -> str | None:
    """What was decided, by whom and when, from the task's timeline; None while it waits for review."""
    if task.status == "pending_review":
        return None
    event = (
        TimelineEvent.select()
        .where((TimelineEvent.task == task) & TimelineEvent.type.in_(("approved", "rejected")))
        .order_by(TimelineEvent.id.desc())
        .first()
    )
    who = (event.actor_name or "") if event is not None else ""
    return gettext(
        "%(status)s · %(who)s · %(when)s",
        status=STATUS_LABELS.get(task.status, task.status),
        who=who,
        when=_when(event.at if event is not None else task.updated_at, zone),
    )


def facts(task: ReviewTask, team: TeamSettings, zone: Any) -> dict[str, str]:
    selections, candidates = task.selections or {}, task.candidates or {}
    title = selections.get("title") or next(iter(candidates.get("titles") or []), None) or task.topic
    summary = (
        selections.get("summary")
        or selections.get("description")
        or next(iter(candidates.get("summaries") or candidates.get("descriptions") or []), "")
    )
    return {
        "account": team.account_name(task.public_account),
        "title": str(title)[:120],
        "summary": str(summary)[:300],
        "created": gettext("Created by the agent · %(when)s", when=_when(task.created_at, zone)),
        "link": f"{team.public_url}/review/{task.task_id}",
    }


def _line(text: str) -> dict[str, Any]:
    return {"tag": "div", "text": {"tag": "plain_text", "content": text}}


def feishu_card(task: ReviewTask, team: TeamSettings, zone: Any, buttons: bool, note: str | None = None) -> dict:
    """Card JSON 2.0. `buttons`: the decision buttons (with a note box for sending back); `note`: a line
    shown instead of them (what was decided, or what is happening)."""
    shown = facts(task, team, zone)
    decided = note or verdict(task, zone)
    elements: list[dict[str, Any]] = [_line(shown["summary"]), _line(shown["created"])]
    open_review = {
        "tag": "button",
        "text": {"tag": "plain_text", "content": gettext("Open review")},
        "behaviors": [{"type": "open_url", "default_url": shown["link"]}],
    }
    if decided or not buttons:
        elements.append(_line(decided or gettext("Choices are left to make: decide on the page.")))
    else:
        decide = [
            {
                "tag": "button",
                "name": action,
                "text": {"tag": "plain_text", "content": str(ACTION_LABELS[action])},
                "type": _FEISHU_STYLE[action],
                "form_action_type": "submit",
                "behaviors": [
                    {"type": "callback", "value": {"taskId": task.task_id, "action": action, "version": task.version}}
                ],
            }
            for action in BUTTONS
        ]
        elements.append(
            {
                "tag": "form",
                "name": "decision",
                "elements": [
                    {
                        "tag": "input",
                        "name": "note",
                        "placeholder": {"tag": "plain_text", "content": gettext("Note for sending back (optional)")},
                        "max_length": 1000,
                    },
                    *decide,
                ],
            }
        )
    elements.append(open_review)
    return {
        "schema": "2.0",
        "config": {"update_multi": True},
        "header": {
            "title": {"tag": "plain_text", "content": shown["title"]},
            "subtitle": {"tag": "plain_text", "content": shown["account"]},
            "template": "grey" if decided else "blue",
        },
        "body": {"elements": elements},
    }


def wecom_card(task: ReviewTask, team: TeamSettings, zone: Any, buttons: bool) -> dict:
    """A button_interaction template card; its task_id is <taskId>-<version>, each key action:taskId:version."""
    shown = facts(task, team, zone)
    keys = [
        {
            "text": str(ACTION_LABELS[action])[:10],
            "style": 1 if action != "reject_rework" else 3,
            "key": f"{action}:{task.task_id}:{task.version}",
        }
        for action in BUTTONS
        if buttons
    ]
    return {
        "card_type": "button_interaction",
        "source": {"desc": shown["account"][:13]},
        "main_title": {"title": shown["title"][:36], "desc": shown["summary"][:44]},
        "sub_title_text": shown["created"],
        "card_action": {"type": 1, "url": shown["link"]},
        "task_id": f"{task.task_id}-{task.version}",
        "button_list": [*keys, {"text": gettext("Open review")[:10], "style": 2, "type": 1, "url": shown["link"]}],
    }


def wecom_done(text: str) -> str:
    """WeCom's replace_name holds at most 20 characters."""
    return text[:20]
