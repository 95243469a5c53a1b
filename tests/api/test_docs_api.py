"""docs/api.md states every route, setting, error code and event the code has, in sections numbered 1
to 20 (comments cite them as §N, so the numbers must not move)."""

import re
from pathlib import Path

from rules.vocabulary import EVENT_TYPES, TEAM_EVENTS, WEBHOOK_EVENTS
from services.errors import ERROR_CODES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
SECTIONS = [
    "Running it",
    "Errors",
    "Authentication",
    "Review tasks",
    "Publishing",
    "Assets",
    "Package",
    "Delete",
    "Feedback",
    "Admin HTML",
    "Operations",
    "Phone preview",
    "The agent's side",
    "The reviewer's workspace",
    "The team around a task",
    "Signals a team can trust",
    "The code",
    "Going live",
    "What readers did",
    "Decisions as data",
    "Editions",
    "Deciding from the team's chat",
    "Readers' comments",
]


def _placeholders(text):
    """`/review/<task_id>`, `/review/{taskId}` and `/review/<taskId>` all read `/review/{}`."""
    return re.sub(r"<[^<>/]+>|\{[^{}/]+\}", "{}", text)


def test_sections_keep_their_numbers():
    headings = re.findall(r"^## (\d+)\. (.+)$", DOC, re.MULTILINE)
    assert [int(number) for number, _ in headings] == list(range(1, len(SECTIONS) + 1))
    for (_, title), expected in zip(headings, SECTIONS, strict=True):
        assert title.startswith(expected), (title, expected)


def test_every_error_code_and_event_is_documented():
    names = (*ERROR_CODES, *EVENT_TYPES, *WEBHOOK_EVENTS, *TEAM_EVENTS)
    assert [name for name in names if f"`{name}`" not in DOC] == []


def test_every_route_is_documented(app):
    text = _placeholders(DOC)
    rules = {_placeholders(rule.rule) for rule in app.url_map.iter_rules() if rule.endpoint != "static"}
    assert sorted(rule for rule in rules if f"`{rule}" not in text and f" {rule}`" not in text) == []
