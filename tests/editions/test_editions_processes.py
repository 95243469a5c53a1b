"""Editions across processes (docs/api.md §21), black-box: `python app.py` processes on one store, the fake
platform in the test. An edition is sent once by three processes, and a send a killed process left is
repeated with the same clientmsgid, which the platform answers 45065: followers get one message."""

import os
import signal
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.helpers.live_processes import AGENT, live_of, published, service
from tests.helpers.served import wait_for_passes
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.both_stores


def _edition(base, session, edition):
    return session.get(f"{base}/api/editions/{edition['id']}", timeout=10).json()


def _proposed(base, session, count):
    tasks = [published(base, session) for _ in range(count)]
    answer = requests.post(
        f"{base}/api/editions",
        headers=AGENT,
        timeout=10,
        json={"account": "silicon-rise", "taskIds": [task["id"] for task in tasks]},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_three_processes_send_an_edition_once(tmp_path, settings, fake):
    fake.withhold_events = True  # every process polls mass/get too
    with ExitStack() as stack:
        processes = [stack.enter_context(service(tmp_path, settings)) for _ in range(3)]
        (base, session, _), others = processes[0], processes[1:]
        edition = _proposed(base, session, 2)
        at = datetime.now(UTC) + timedelta(seconds=2)
        answer = session.post(f"{base}/api/editions/{edition['id']}/send", json={"at": at.isoformat()}, timeout=10)
        assert answer.status_code == 202, answer.text
        last = others[-1]
        wait_until(lambda: _edition(last[0], last[1], edition)["status"] == "sent", 30, "not sent")
        wait_for_passes([p[0] for p in processes], "edition")  # each has looked since
        for task_id in edition["taskIds"]:
            assert live_of(base, session, {"id": task_id})["via"] == "mass_send"
    assert fake.sendall_calls == 1 and len(fake.mass_sends) == 1


def test_a_send_a_killed_process_left_is_repeated_never_sent_twice(tmp_path, settings, fake):
    fake.sendall_delay = 30  # the platform has the send; its answer never reaches the process
    with service(tmp_path, settings) as (base, session, process):
        edition = _proposed(base, session, 2)
        assert session.post(f"{base}/api/editions/{edition['id']}/send", json={}, timeout=10).status_code == 202
        wait_until(lambda: fake.sendall_calls == 1, 20, "no sendall")
        assert _edition(base, session, edition)["status"] == "sending"
        os.kill(process.pid, signal.SIGKILL)  # mid-call
        process.wait(timeout=10)
    assert len(fake.mass_sends) == 1
    with service(tmp_path, settings) as (base, session, _process):
        wait_until(lambda: _edition(base, session, edition)["status"] == "sent", 30, "not sent after the restart")
        sent = _edition(base, session, edition)
        [send] = fake.mass_sends.values()
        assert sent["msgId"] == str(send["msg_id"])
        for task_id in edition["taskIds"]:
            assert live_of(base, session, {"id": task_id})["status"] == "live"
    assert fake.sendall_calls == 2 and len(fake.mass_sends) == 1
    [first, repeat] = fake.requests_to("message/mass/sendall")
    assert first["json"]["clientmsgid"] == repeat["json"]["clientmsgid"] == edition["id"]


def _go_live(base, session, task_id, **body):
    return session.post(f"{base}/api/review/tasks/{task_id}/go-live", json=body, timeout=10)


def _task(base, session, task_id):
    return session.get(f"{base}/api/review/tasks/{task_id}", timeout=10).json()


def test_a_task_in_an_edition_on_its_way_never_goes_live_alone(tmp_path, settings, fake):
    """Issue 52 item 1: a task of a scheduled edition went live alone (202) and the edition sent it too, so
    followers got it twice. Scheduled or sending, the edition holds it: 409 in_edition, nothing changes."""
    with service(tmp_path, settings) as (base, session, _process):
        edition = _proposed(base, session, 2)
        later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
        answer = session.post(f"{base}/api/editions/{edition['id']}/send", json={"at": later}, timeout=10)
        assert answer.status_code == 202, answer.text
        held = edition["taskIds"][1]
        before = _task(base, session, held)
        for body in ({}, {"at": (datetime.now(UTC) + timedelta(minutes=5)).isoformat()}):
            refused = _go_live(base, session, held, **body)
            assert refused.status_code == 409, refused.text
            error = refused.json()["error"]
            assert error["code"] == "in_edition" and edition["id"] in error["message"], error
            assert error["details"] == {"editionId": [edition["id"]], "editionStatus": ["scheduled"]}
        assert _task(base, session, held) == before  # live still null, the same version
        assert _edition(base, session, edition)["status"] == "scheduled"
        # Once the edition's send is canceled, the task may go live alone.
        assert session.delete(f"{base}/api/editions/{edition['id']}/send", timeout=10).status_code == 200
        assert _go_live(base, session, held).status_code == 202
        # While an edition is sending (its sendall answer held on its way until the checks are done), the same.
        fake.hold_sendall()
        second = _proposed(base, session, 2)
        assert session.post(f"{base}/api/editions/{second['id']}/send", json={}, timeout=10).status_code == 202
        wait_until(lambda: fake.sendall_calls == 1, 30, "no sendall")
        try:
            assert _edition(base, session, second)["status"] == "sending"
            refused = _go_live(base, session, second["taskIds"][0])
            assert refused.status_code == 409 and refused.json()["error"]["details"]["editionStatus"] == ["sending"]
        finally:
            fake.release_sendall()
        wait_until(lambda: _edition(base, session, second)["status"] == "sent", 60, "not sent")
        for task_id in second["taskIds"]:
            assert live_of(base, session, {"id": task_id})["via"] == "mass_send"
    submitted = [call["json"]["media_id"] for call in fake.requests_to("freepublish/submit")]
    assert len(submitted) == 1  # the task let go by the canceled edition only
    assert fake.sendall_calls == 1 and len(fake.mass_sends) == 1
