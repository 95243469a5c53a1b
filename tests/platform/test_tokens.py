"""A refused access token (docs/api.md §5 "Tokens"): normal mode first, a forced stable_token refresh only
when normal mode answers the very token refused, at most once per account and 30 s across processes; and
the fake's stable_token as the platform's documents give it (fakeplatform/samples/stable_token.json)."""

import json
import subprocess
import sys
import time

import pytest
import requests

from models.platform import PlatformToken
from services.platform.client import PlatformClient, PlatformError, client_for
from tests.helpers.images import png_bytes
from tests.helpers.publishing import ACCOUNTS, platform_settings
from tests.helpers.served import ROOT

pytestmark = pytest.mark.both_stores
ACCOUNT = "silicon-rise"
APPID, SECRET = ACCOUNTS[ACCOUNT]

# One process of the service's: its own client (its own locks), on the test's database; it lists the
# image materials once told to go, and prints the total or the failure.
PROCESS = """
import json, sys
from models.base import init_database
from services.platform.client import PlatformClient, PlatformError
url, path, base, appid, secret = sys.argv[1:6]
init_database(database_url=url or None, sqlite_path=path or None)
client = PlatformClient("silicon-rise", appid, secret, base, timeout=(5, 30))
print("ready", flush=True)
sys.stdin.readline()
try:
    print(json.dumps(client.batchget_images(0, 10)["total_count"]), flush=True)
except PlatformError as exc:
    print(json.dumps(str(exc)), flush=True)
"""


def stable_token(fake, force_refresh):
    """A stable_token call as any holder of the AppID makes it (the team's other tool)."""
    body = {"grant_type": "client_credential", "appid": APPID, "secret": SECRET, "force_refresh": force_refresh}
    return requests.post(f"{fake.base_url}/cgi-bin/stable_token", json=body, timeout=10).json()


def forced_asks(fake):
    return [r for r in fake.requests_to("/stable_token") if r["json"]["force_refresh"]]


def test_a_token_another_tool_replaced_is_renewed_in_normal_mode_forcing_nothing(make_app, fake, store):
    app = make_app(**platform_settings(fake))
    client = client_for(ACCOUNT, app.extensions["settings"])
    fake.seed_image_material("a.png", png_bytes())
    mine = client.access_token()
    theirs = stable_token(fake, True)["access_token"]  # the editor plugin forces: the service's token is gone

    assert client.batchget_images(0, 10)["total_count"] == 1

    asked = [r["json"]["force_refresh"] for r in fake.requests_to("/stable_token")]
    assert asked == [False, True, False]  # the service's, the plugin's, the service's normal-mode ask
    assert [r["query"]["access_token"] for r in fake.requests_to("batchget_material")] == [mine, theirs]
    assert len(fake.forced_refreshes[APPID]) == 1
    assert (
        "errcode"
        not in requests.post(  # the plugin's token still works
            f"{fake.base_url}/cgi-bin/material/batchget_material",
            params={"access_token": theirs},
            json={"type": "image", "offset": 0, "count": 1},
            timeout=10,
        ).json()
    )


def test_two_processes_refused_the_same_token_at_once_force_one_refresh(make_app, fake, store, database_url, tmp_path):
    app = make_app(**platform_settings(fake))
    client = client_for(ACCOUNT, app.extensions["settings"])
    fake.seed_image_material("a.png", png_bytes())
    refused = client.access_token()
    fake.refuse_token(refused)  # 40001 to it, while normal mode still answers it
    # Both processes' stable_token asks are held 3 s, so each asks before the other has stored anything.
    fake.hang_next("/stable_token", 3, times=2)
    sqlite_path = "" if database_url else str(tmp_path / "instance" / "review.db")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESS, database_url, sqlite_path, fake.base_url, APPID, SECRET],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        assert [process.stdout.readline().strip() for process in processes] == ["ready", "ready"]
        for process in processes:
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [json.loads(process.communicate(timeout=90)[0]) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert outputs == [1, 1]
    assert len(forced_asks(fake)) == 1
    assert len(fake.forced_refreshes[APPID]) == 1
    row = PlatformToken.get(PlatformToken.account == ACCOUNT)
    assert row.access_token == fake._current[APPID] != refused and row.forced_at is not None


def test_a_second_forced_refresh_within_30_seconds_is_not_asked_for(make_app, fake, store):
    make_app(**platform_settings(fake))
    client = PlatformClient(ACCOUNT, APPID, SECRET, fake.base_url, timeout=(2, 1))
    fake.seed_image_material("a.png", png_bytes())
    fake.refuse_token(client.access_token())
    assert client.batchget_images(0, 10)["total_count"] == 1  # forced once: a new token
    fake.refuse_token(client.access_token())  # refused as well, and normal mode answers it

    with pytest.raises(PlatformError) as caught:
        client.batchget_images(0, 10)

    assert "a forced refresh was made less than 30 s ago" in str(caught.value)
    assert len(forced_asks(fake)) == 1


def test_the_fake_forces_as_the_documents_say(fake):
    first = stable_token(fake, False)
    assert stable_token(fake, False)["access_token"] == first["access_token"]  # normal mode: the same token
    second = stable_token(fake, True)
    assert second["access_token"] != first["access_token"] and second["expires_in"] == 7200
    # less than 30 s after the last forced refresh: not refreshed, the current token answered
    assert stable_token(fake, True)["access_token"] == second["access_token"]
    assert len(fake.forced_refreshes[APPID]) == 1
    fake.forced_refreshes[APPID] = [time.time() - 31]  # the last one 31 s ago
    third = stable_token(fake, True)["access_token"]
    assert third != second["access_token"]
    fake.forced_refreshes[APPID] = [time.time() - 3600 - 60 * n for n in range(20)]  # 20 in the last day
    refused = stable_token(fake, True)
    assert refused["errcode"] == 45009 and refused["errmsg"].startswith("reach max api daily quota limit rid: ")
    assert stable_token(fake, False)["access_token"] == third  # normal mode goes on


def test_the_fake_renews_in_normal_mode_in_a_tokens_last_five_minutes(fake):
    """stable_token's page: normal mode gives a new token in the old one's last 5 minutes, the old one still
    good until it ends; the old fake answered the ending token, expires_in below 300, until it expired."""
    first = stable_token(fake, False)["access_token"]
    with fake._lock:
        fake._tokens[first]["expires_at"] = time.time() + 120
    renewed = stable_token(fake, False)
    assert renewed["access_token"] != first and renewed["expires_in"] == 7200, renewed
    with fake._lock:
        assert fake._appid_for(first) == APPID  # the old one still good: no other holder loses it
