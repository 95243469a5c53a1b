"""The README's examples run as written (docs/api.md §16 Docs): the agent's curl bodies and the MCP
walk-through's arguments are sent to the service and accepted, and the ids the README shows have the
form the service makes (rules/ids.py). A new instance's start says how to create the first admin."""

import asyncio
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
from mcp import Client

from agentmcp.api import ReviewApi
from agentmcp.server import build_server
from agentmcp.tools import build_tools
from cli.demo import mcp_lines
from rules.ids import new_id
from tests.helpers.app import AGENT_TOKEN, signed_in_admin
from tests.helpers.review import article_selections, decision_url, live_server, locked_except, png_bytes
from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TOOLS = {tool.name: tool for tool in build_tools()}
SERVICE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{21}")  # rules.ids.new_id(): token_urlsafe(16), no leading - or _


def section(title):
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


AGENT = section("Calling the API as an agent")
MCP = section("Agents that speak MCP")


def curl_bodies():
    """The JSON each `curl … -d '…'` sends (shell single quotes: the text is passed as it stands)."""
    return [json.loads(body) for body in re.findall(r"-d '(.*?)'", AGENT, re.S)]


def walk_through():
    """[(tool, arguments)] of the walk-through's ```text blocks: lines `tool_name {json…}`."""
    calls = []
    for block in re.findall(r"```text\n(.*?)```", MCP, re.S):
        for match in re.finditer(r"^(\w+) (?=\{)", block, re.M):
            if match.group(1) in TOOLS:
                arguments, _end = json.JSONDecoder().raw_decode(block, match.end())
                calls.append((match.group(1), arguments))
    return calls


def shown_ids():
    """Every task or asset id the MCP section shows: in assetId/taskId/id values and upload urls."""
    values = re.findall(r'"(?:assetId|taskId|id)": "([^"]*)"', MCP) + re.findall(r"/uploads/review/([^\".]*)\.", MCP)
    return {value for value in values if value != "b1"}  # b1: a body option's id, chosen by the agent


def test_the_readme_shows_ids_as_the_service_makes_them():
    assert all(SERVICE_ID.fullmatch(new_id()) for _ in range(200))  # the pattern is the service's
    ids = shown_ids()
    assert len(ids) == 2, ids  # one asset, one task
    assert all(SERVICE_ID.fullmatch(value) for value in ids), ids
    assert not re.search(r"\b(task|ast)_", README)  # prefixes the service never made


def test_the_agents_curl_examples_are_accepted(app, client, agent_headers):
    upload = client.post(
        "/api/assets/upload", headers=agent_headers, data={"file": (io.BytesIO(png_bytes(900, 500)), "cover.png")}
    )
    assert upload.status_code == 201, upload.get_json()
    create, patch = curl_bodies()
    create = json.loads(json.dumps(create).replace("<the url step 1 returned>", upload.get_json()["url"]))
    key = re.search(r"Idempotency-Key: ([^']+)'", AGENT).group(1)
    created = client.post("/api/review/agent/tasks", json=create, headers={**agent_headers, "Idempotency-Key": key})
    assert created.status_code == 201, created.get_json()
    task = created.get_json()
    _reject_title(app, task, upload.get_json())
    patched = client.patch(f"/api/review/agent/tasks/{task['id']}/elements", json=patch, headers=agent_headers)
    assert patched.status_code == 200 and patched.get_json()["status"] == "pending_review", patched.get_json()


def _reject_title(app, task, cover, note="标题太长"):
    selections = {**article_selections(task, cover), "author": ""}
    rejected = signed_in_admin(app).post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "rejectedElements": ["title"],
            "rejectionReason": "style_mismatch",
            "rejectionNote": note,
            "selections": selections,
            "lockedSelections": locked_except(selections, ["title"]),
        },
    )
    assert rejected.status_code == 200, rejected.get_json()


def test_the_mcp_walk_through_runs_as_written(app, tmp_path):
    (tmp_path / "cover.png").write_bytes(png_bytes(900, 500))
    calls = walk_through()
    assert [name for name, _ in calls] == [
        "upload_image",
        "create_review_task",
        "list_review_tasks",
        "get_review_task",
        "patch_task_elements",
    ]
    shown_asset = re.search(r'"assetId": "([^"]*)"', MCP).group(1)
    shown_task = re.search(r'"taskId": "([^"]*)"', MCP).group(1)
    error_text = re.search(r"a 501-character topic:\n`(.*?)`", MCP, re.S).group(1).replace("\n", " ")
    with live_server(app) as base_url:
        api = ReviewApi(base_url, AGENT_TOKEN, upload_root=str(tmp_path))

        async def agent():
            answers, real = [], {}
            async with Client(build_server(api)) as client:
                for name, arguments in calls:
                    text = json.dumps(arguments, ensure_ascii=False)
                    for shown, actual in real.items():
                        text = text.replace(shown, actual)
                    arguments = json.loads(text)
                    assert not list(jsonschema.Draft202012Validator(TOOLS[name].input_schema).iter_errors(arguments))
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, (name, result.structured_content)
                    answers.append(answer := result.structured_content)
                    if name == "upload_image":
                        real[shown_asset] = answer["assetId"]
                    if name == "create_review_task":
                        real[shown_task] = answer["id"]
                        _reject_title(app, answer, answers[0])
                mistake = await client.call_tool("create_review_task", {**calls[1][1], "topic": "x" * 501})
            return answers, mistake

        answers, mistake = asyncio.run(asyncio.wait_for(agent(), timeout=60))
    uploaded, created, listed, seen, patched = answers
    assert created["status"] == "pending_review" and created["candidates"]["bodyOptions"][0]["focuses"]
    assert [task["id"] for task in listed["tasks"]] == [created["id"]]
    assert (seen["rejectedElements"], seen["rejectionNote"]) == (["title"], "标题太长")
    assert patched["status"] == "pending_review"
    assert mistake.is_error and mistake.structured_content == json.loads(error_text)


def test_a_new_instance_says_how_to_create_the_first_admin(tmp_path):
    lines = _start_output(tmp_path)
    hints = [line for line in lines if "create-admin" in line]
    assert len(hints) == 1 and "flask --app app create-admin" in hints[0], lines


def test_no_hint_once_an_admin_exists(tmp_path):
    lines = _start_output(tmp_path, REVIEW_ADMIN_USERNAME="alice", REVIEW_ADMIN_PASSWORD="correct horse battery")
    assert any("admin account alice created" in line for line in lines), lines
    assert not [line for line in lines if "create-admin" in line], lines


def _start_output(tmp_path, **settings):
    """The log lines of `python app.py` on a new instance, from start until it answers /healthz."""
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REVIEW_ADMIN_USERNAME", "REVIEW_ADMIN_PASSWORD", "DATABASE_URL")
    }
    env.update(
        PORT=str(port),
        REVIEW_INSTANCE_PATH=str(tmp_path / "instance"),
        REVIEW_UPLOADS_PATH=str(tmp_path / "uploads"),
        WEBHOOK_SENDER_ENABLED="false",
        TEAM_MESSAGES_ENABLED="false",
        CHAT_CARDS_ENABLED="false",
        **settings,
    )
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: answers_ok(f"http://127.0.0.1:{port}/healthz"), 60, "the service did not start")
    finally:
        os.kill(server.pid, signal.SIGTERM)
        stderr = server.communicate(timeout=30)[1]
    return stderr.splitlines()


def test_the_demos_http_line_names_a_token():
    """`python app.py --demo` prints a `--http` command: without MCP_HTTP_TOKEN it would not start."""
    [line] = [line for line in mcp_lines("http://127.0.0.1:8000", AGENT_TOKEN) if "--http" in line]
    assert re.search(r"MCP_HTTP_TOKEN=(\S+) ", line) and "Authorization: Bearer " in line
