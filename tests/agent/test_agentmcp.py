"""The MCP server (docs/api.md §13) driven by the `mcp` SDK's own client, over stdio and streamable HTTP,
against the service on a real HTTP server."""

import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from agentmcp.api import ApiError, read_upload
from models import Asset, db
from tests.helpers.app import AGENT_TOKEN, signed_in_admin
from tests.helpers.mcp import call, run, stdio_params
from tests.helpers.review import (
    approve_article,
    article_payload,
    article_selections,
    decision_url,
    live_server,
    locked_except,
    png_bytes,
)
from tests.helpers.served import free_port, listening
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "upload_image",
    "create_review_task",
    "get_review_task",
    "list_review_tasks",
    "patch_task_elements",
    "get_task_stats",
    "export_dataset",
    "propose_edition",
    "get_edition",
    "list_comments",
    "propose_reply",
}


def test_the_tools_with_the_api_schemas(app):
    with live_server(app) as base_url:

        async def listing():
            async with Client(stdio_params(base_url)) as client:
                return (await client.list_tools()).tools

        tools = {tool.name: tool for tool in run(listing())}
    assert set(tools) == TOOLS
    document = app.test_client().get("/api/openapi.json").get_json()
    create = tools["create_review_task"].input_schema
    documented = document["components"]["schemas"]["CreateTask"]
    # One source of truth: the tool takes exactly the API's creation body (plus the header it sets).
    assert set(create["properties"]) - {"idempotencyKey"} == set(documented["properties"])
    assert create["required"] == documented["required"]
    assert set(create["$defs"]) >= {"Candidates", "BodyOption"}
    checker = jsonschema.Draft202012Validator(create)
    assert not list(checker.iter_errors(article_payload()))
    assert list(checker.iter_errors({**article_payload(), "publicAccount": "No Account!"}))  # the check can fail
    # The service's accounts are a setting (docs/api.md §18): the tool takes any code; the service decides.
    assert "enum" not in create["properties"]["publicAccount"]
    assert not list(checker.iter_errors({**article_payload(), "publicAccount": "moon-walk"}))
    listing_schema = tools["list_review_tasks"].input_schema
    assert set(listing_schema["properties"]) == {"status", "publicAccount", "live", "updatedSince"}
    patch = tools["patch_task_elements"].input_schema
    assert patch["required"] == ["taskId", "elements"]
    assert set(patch["properties"]["elements"]["properties"]) == set(
        document["components"]["schemas"]["PatchElements"]["properties"]
    )
    reply = tools["propose_reply"].input_schema
    assert set(reply["required"]) == {"taskId", "commentId", "content"}
    assert (
        reply["properties"]["content"]["maxLength"]
        == document["components"]["schemas"]["ProposalBody"]["properties"]["content"]["maxLength"]
    )
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.description


def test_the_walk_through_upload_create_reject_patch_approved(app, tmp_path):
    """What the README's walk-through shows, driven over stdio as an MCP client would."""
    image = tmp_path / "cover.png"
    image.write_bytes(png_bytes(900, 500))
    admin = signed_in_admin(app)
    with live_server(app) as base_url:

        async def agent_side():
            async with Client(stdio_params(base_url, upload_root=tmp_path)) as client:
                failed, asset = await call(client, "upload_image", {"path": str(image)})
                assert not failed, asset
                payload = {**article_payload([asset["url"]]), "idempotencyKey": "walk-through-1"}
                failed, task = await call(client, "create_review_task", payload)
                assert not failed and task["status"] == "pending_review", task
                failed, again = await call(client, "create_review_task", payload)
                assert not failed and again["id"] == task["id"]  # the idempotency key held

                # The reviewer rejects the title (admin API, as the page does).
                selections = article_selections(task, asset)
                rejected = admin.post(
                    decision_url(task),
                    json={
                        "action": "reject_rework",
                        "rejectedElements": ["title"],
                        "rejectionReason": "style_mismatch",
                        "rejectionNote": "标题太长",
                        "selections": selections,
                        "lockedSelections": locked_except(selections, ["title"]),
                    },
                )
                assert rejected.status_code == 200, rejected.get_json()

                failed, waiting = await call(client, "list_review_tasks", {"status": "rejected_rework"})
                assert not failed and [t["id"] for t in waiting["tasks"]] == [task["id"]]
                failed, seen = await call(client, "get_review_task", {"taskId": task["id"]})
                assert (seen["rejectedElements"], seen["rejectionNote"]) == (["title"], "标题太长")
                failed, patched = await call(
                    client, "patch_task_elements", {"taskId": task["id"], "elements": {"title": "芯片三问"}}
                )
                assert not failed and patched["status"] == "pending_review", patched

                approved = admin.post(
                    decision_url(task),
                    json={**approve_article(task, asset), "selections": {**selections, "title": "芯片三问"}},
                )
                assert approved.status_code == 200, approved.get_json()
                failed, final = await call(client, "get_review_task", {"taskId": task["id"]})
                return final

        final = run(agent_side())
    assert final["status"] == "approved" and final["selections"]["title"] == "芯片三问"
    assert [e["type"] for e in final["timeline"]][:4] == [
        "task_created",
        "rejected",
        "rework_submitted",
        "returned_to_review",
    ]


def test_errors_come_back_as_tool_errors_naming_the_field(app, tmp_path):
    with live_server(app) as base_url:

        async def mistakes():
            async with Client(stdio_params(base_url, upload_root=tmp_path)) as client:
                bad = {**article_payload(), "topic": "x" * 501}
                invalid = await call(client, "create_review_task", bad)
                missing = await call(client, "get_review_task", {"taskId": "task_nope"})
                neither = await call(client, "upload_image", {})
                huge = tmp_path / "huge.png"
                huge.write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
                too_large = await call(client, "upload_image", {"path": str(huge)})
                # A header carries printable ASCII only: "键" was an internal error, a line break "unreachable".
                headers = [
                    await call(client, "create_review_task", {**article_payload(), "idempotencyKey": "键-1"}),
                    await call(client, "create_review_task", {**article_payload(), "idempotencyKey": "a\nb"}),
                    await call(client, "create_review_task", {**article_payload(), "idempotencyKey": " k"}),
                    await call(
                        client,
                        "patch_task_elements",
                        {"taskId": "task_nope", "elements": {"titleCandidates": ["x"]}, "ifMatch": "版本"},
                    ),
                ]
            async with Client(stdio_params(base_url, token="wrong-token")) as client:
                refused = await call(client, "list_review_tasks", {})
            return invalid, missing, neither, refused, too_large, headers

        invalid, missing, neither, refused, too_large, headers = run(mistakes())
    failed, body = invalid
    assert failed and body["error"]["code"] == "validation_error" and body["error"]["status"] == 400
    assert "topic" in body["error"]["details"]
    assert missing[0] and missing[1]["error"]["code"] == "not_found"
    assert neither[0] and "path" in neither[1]["error"]["details"]
    assert refused[0] and refused[1]["error"]["code"] == "unauthorized"
    assert too_large[0] and too_large[1]["error"]["code"] == "payload_too_large"
    for (failed, body), name in zip(headers, ("idempotencyKey",) * 3 + ("ifMatch",), strict=True):
        assert failed and body["error"]["code"] == "validation_error" and name in body["error"]["details"], body


HTTP_TOKEN = "mcp-http-token-for-tests"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}},
}


def test_streamable_http_transport_needs_the_bearer_token(app):
    port = free_port()
    with live_server(app) as base_url:
        env = {
            **os.environ,
            "REVIEW_BASE_URL": base_url,
            "REVIEW_AGENT_TOKEN": AGENT_TOKEN,
            "MCP_HTTP_TOKEN": HTTP_TOKEN,
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "agentmcp", "--http", str(port)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:

            def started():
                assert server.poll() is None, server.stderr.read()
                return listening(port)

            wait_until(started, 20, "the MCP server did not start", every=0.1)
            url = f"http://127.0.0.1:{port}/mcp"
            accept = {"Accept": "application/json, text/event-stream"}
            refused = [
                requests.post(url, json=INITIALIZE, headers={**accept, **extra}, timeout=10)
                for extra in (
                    {},
                    {"Authorization": "Bearer wrong-token"},
                    {"Authorization": f"Bearer {HTTP_TOKEN}x"},
                    {"Authorization": HTTP_TOKEN},
                    {"Authorization": f"Basic {HTTP_TOKEN}"},
                )
            ]
            refused.append(requests.get(f"http://127.0.0.1:{port}/anything", timeout=10))

            async def over_http(headers):
                http_client = create_mcp_http_client(headers=headers)
                async with http_client, Client(streamable_http_client(url, http_client=http_client)) as client:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    return names, await call(client, "list_review_tasks", {"status": "all"})

            names, (failed, listing) = run(over_http({"Authorization": f"Bearer {HTTP_TOKEN}"}))
        finally:
            server.terminate()
            server.wait(timeout=10)
    assert [answer.status_code for answer in refused] == [401] * 6
    assert all(answer.json()["error"]["code"] == "unauthorized" for answer in refused)
    assert names == TOOLS
    assert not failed and listing == {"tasks": []}


def test_http_without_a_token_refuses_to_start():
    env = {**os.environ, "REVIEW_BASE_URL": "http://127.0.0.1:9", "REVIEW_AGENT_TOKEN": AGENT_TOKEN}
    env.pop("MCP_HTTP_TOKEN", None)
    for token in (None, "", "  "):
        started = env if token is None else {**env, "MCP_HTTP_TOKEN": token}
        # The old server served without one (and this run waited until its timeout).
        done = subprocess.run(
            [sys.executable, "-m", "agentmcp", "--http", str(free_port())],
            cwd=ROOT,
            env=started,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode != 0 and "MCP_HTTP_TOKEN" in done.stderr, (token, done.stderr)


def test_upload_image_reads_only_regular_files_under_the_upload_root(app, tmp_path):
    root = tmp_path / "agent-files"
    root.mkdir()
    (root / "cover.png").write_bytes(png_bytes(900, 500))
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes(900, 500))
    (root / "link.png").symlink_to(outside)
    (root / "zero.png").symlink_to("/dev/zero")
    os.mkfifo(root / "pipe.png")
    # The outside file first: the old server uploaded it (and read /dev/zero until memory ran out).
    refused = {
        "outside": str(outside),
        "missing outside": str(tmp_path / "nothing.png"),
        "dot-dot": "../secret.png",
        "dot-dot absolute": f"{root}/../secret.png",
        "symlink out": "link.png",
        "/dev/zero": "/dev/zero",
        "symlink to /dev/zero": "zero.png",
        "FIFO": "pipe.png",
        "folder": ".",
        "missing inside": "nothing.png",
    }
    with live_server(app) as base_url:

        async def uploads():
            answers = {}
            async with Client(stdio_params(base_url, upload_root=root)) as client:
                for name, path in refused.items():
                    answers[name] = failed, body = await call(client, "upload_image", {"path": path})
                    assert failed and body["error"]["code"] == "validation_error", (name, body)
                    assert list(body["error"]["details"]) == ["path"], (name, body)
                answers["inside"] = await call(client, "upload_image", {"path": "cover.png"})
                answers["inside absolute"] = await call(client, "upload_image", {"path": str(root / "cover.png")})
            return answers

        answers = run(uploads())
    # Whether a file outside the root exists is not told: the same answer for both.
    assert answers["outside"] == answers["missing outside"] == answers["dot-dot"]
    assert answers["symlink out"][1]["error"]["details"] == {"path": ["not under MCP_UPLOAD_ROOT"]}
    assert answers["FIFO"][1]["error"]["details"] == {"path": ["not a regular file"]}
    failed, asset = answers["inside"]
    assert not failed and asset["url"].startswith("/uploads/review/"), asset
    assert answers["inside absolute"] == answers["inside"]  # the same bytes: the same asset
    with db.connection_context():
        assert Asset.select().count() == 1  # nothing from outside became an asset


def test_a_file_is_read_at_most_one_byte_past_the_limit():
    """/proc files say they are empty and are not: the read itself is bounded, not only the size check."""
    proc = Path("/proc/self").resolve()
    assert os.stat(proc / "status").st_size == 0
    assert len(read_upload(proc, "status", limit=100_000)) > 16
    with pytest.raises(ApiError) as refused:
        read_upload(proc, "status", limit=16)
    assert refused.value.code == "payload_too_large"


def test_a_missing_address_or_token_is_refused_at_start():
    env = {"PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "agentmcp"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and "REVIEW_AGENT_TOKEN" in done.stderr


def test_the_upload_root_is_the_folder_the_server_started_in_unless_set(tmp_path, monkeypatch):
    from agentmcp.api import ReviewApi

    monkeypatch.chdir(tmp_path)
    assert ReviewApi("http://127.0.0.1:9", "token").upload_root == tmp_path.resolve()
    elsewhere = tmp_path / "agent-files"
    elsewhere.mkdir()
    api = ReviewApi("http://127.0.0.1:9", "token", upload_root=str(elsewhere))
    assert api.upload_root == elsewhere.resolve()
    (tmp_path / "outside.png").write_bytes(b"\x89PNG")
    with pytest.raises(ApiError):  # the start folder is no longer readable once a root is set
        api.upload_image(path=str(tmp_path / "outside.png"))
