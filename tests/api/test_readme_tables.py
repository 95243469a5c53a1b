"""The README documents every webhook type, team event and MCP tool, one table each, checked here against
the code's own lists (docs/api.md §16 Docs): a new one cannot ship without its row, nor a row outlive what
it names. The settings table: tests/settings/test_tables.py."""

import re
from pathlib import Path

from agentmcp.tools import build_tools
from rules.vocabulary import TEAM_EVENTS, WEBHOOK_EVENTS
from schemas.review.events import WEBHOOKS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def table(header, section=None):
    """{first-column name: the row's text} of the one README table whose header row starts with `header`
    (within the `## section` when given); a first column may name several, each in backticks, before any
    bracketed aside."""
    text = README
    if section:
        start = README.index(f"\n## {section}")
        end = README.find("\n## ", start + 1)
        text = README[start : end if end != -1 else None]
    starts = [m.start() for m in re.finditer(rf"^\| {re.escape(header)} \|", text, re.M)]
    assert len(starts) == 1, f"{len(starts)} tables headed {header!r}"
    rows = {}
    for line in text[starts[0] :].splitlines()[2:]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1].split("(")[0]  # an aside in brackets (an example) names nothing
        for name in re.findall(r"`([A-Za-z][\w.<>]*)`", first):
            assert name not in rows, f"{name} has two rows"
            rows[name] = line
    return rows


def test_every_webhook_type_has_its_row_with_its_data():
    rows = table("webhook type")
    assert set(rows) == set(WEBHOOK_EVENTS) == set(WEBHOOKS)
    for event_type, (data, _body, _when) in WEBHOOKS.items():
        fields = [field.data_key or name for name, field in data._declared_fields.items()]
        assert re.findall(r"`(\w+)`", rows[event_type].split("|")[3]) == fields, event_type


def test_every_team_event_has_its_row():
    assert set(table("team event")) == set(TEAM_EVENTS)


def test_every_mcp_tool_has_its_row_with_its_arguments():
    rows = table("MCP tool")
    tools = build_tools()
    assert set(rows) == {tool.name for tool in tools}
    for tool in tools:
        arguments = rows[tool.name].split("|")[2]
        named = set(re.findall(r"`(\w+)`", arguments))
        properties = set(tool.input_schema.get("properties", {}))
        if tool.name == "create_review_task":  # "the creation body": the API's own, documented there
            properties = {"idempotencyKey"}
        assert properties <= named, (tool.name, properties - named)


def test_the_team_settings_table_gives_the_declared_defaults():
    """The "Tell the team" table's defaults are the settings table's (services/settings/declaration.py), an
    explanation after a colon aside: `NOTIFY_EVENTS` said "all five" when seven events were told."""
    from services.settings import markdown_table

    declared = {}
    for line in markdown_table().splitlines()[2:]:
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        for name in re.findall(r"`([A-Z][\w<>]*)`", cells[0]):
            declared[name] = cells[-1]
    start = README.index("\n## Tell the team")
    section = README[start : README.index("\n## ", start + 1)]
    rows = re.findall(r"^\| (`[A-Z].*?) \| .* \| (.*?) \|$", section, re.M)
    assert len(rows) >= 8, rows
    for names_cell, default in rows:
        names = re.findall(r"`([A-Z][\w<>]*)`", names_cell)
        said = {part.split(":")[0].strip() for part in default.split(", ")}
        assert said == {declared[name] for name in names}, (names, default)


def test_the_quick_start_says_which_tests_are_skipped_until_their_programs_are_installed():
    """A fresh clone skips the browser, PostgreSQL and nginx tests; the Quick start says so, with the packages
    the tests' own skip reasons name (tests/browser/conftest.py, tests/conftest.py,
    tests/operations/test_deploy_nginx.py, tests/helpers/browser.py)."""
    start = README.index("\n## Quick start")
    quick = README[start : README.index("\n## ", start + 1)]
    assert re.findall(r"```sh\n(.*?)\n```", quick, re.S)[:2] == [
        "pip install -e . && python app.py",
        "pip install -e '.[test]' && python -m pytest",
    ]  # the two commands stay as they are
    for said in (
        "skips",
        ".ci/run",
        "apt-get install chromium",
        "axe-core@4.11.4",
        "apt-get install\npostgresql",
        "apt-get install\nnginx",
    ):
        assert said in quick, said
