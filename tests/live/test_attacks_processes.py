"""Issue 41 against real `python app.py` processes: a captured signed query cannot forge or replay an
event, a late freepublish/get answer never lands on the next submission, and a datacube answer past
4 MiB is a failed fetch that leaves every write free."""

import json
import time
from contextlib import ExitStack

import requests

from fakeplatform.freepublish import publish_event_xml, sha1_sorted, signed_push
from tests.helpers.live_processes import live_of, published, service, store_of
from tests.helpers.publishing import went_live_days_ago
from tests.helpers.waiting import wait_until

TOKEN = "late-answer-event-token"


def _target(base):
    return {"url": f"{base}/wechat/silicon-rise/events", "token": TOKEN, "aes_key": "", "mode": "plain"}


def test_a_captured_query_forges_and_replays_nothing(tmp_path, settings, fake):
    fake.withhold_events = True
    with service(tmp_path, {**settings, "WECHAT_SILICON_RISE_TOKEN": TOKEN, "WECHAT_PUBLISH_POLL_DELAYS": "3600"}) as (
        base,
        session,
        _process,
    ):
        task = published(base, session)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task)["status"] == "publishing", 30, "not submitted")
        publish_id = live_of(base, session, task)["publishId"]
        url = f"{base}/wechat/silicon-rise/events"
        # A query as an access log keeps it, from a message the platform pushed a moment ago...
        timestamp, nonce = str(int(time.time())), "778899"
        hello = b"<xml><MsgType>text</MsgType><Content>hi</Content></xml>"
        assert signed_push(url, TOKEN, hello, timestamp=timestamp, nonce=nonce).text == "success"
        # ...replayed with a forged result (an attacker's address, a failure) changes nothing.
        for forged in (
            publish_event_xml(publish_id, 0, "X", "javascript:alert(1)"),
            publish_event_xml(publish_id, 4, None, None),
        ):
            query = {"signature": sha1_sorted(TOKEN, timestamp, nonce), "timestamp": timestamp, "nonce": nonce}
            assert requests.post(url, params=query, data=forged, timeout=5).text == "success"
        # An old signed query (2023) is refused outright.
        old = {"signature": sha1_sorted(TOKEN, "1700000000", "1"), "timestamp": "1700000000", "nonce": "1"}
        assert (
            requests.post(url, params=old, data=publish_event_xml(publish_id, 4, None, None), timeout=5).status_code
            == 403
        )
        # The signature sorts token, timestamp and nonce: the same query with the two swapped signs the same,
        # so it is as taken as the first (docs/api.md §18).
        now = int(time.time())
        first = {"signature": sha1_sorted(TOKEN, str(now), str(now + 1)), "timestamp": str(now), "nonce": str(now + 1)}
        assert requests.post(url, params=first, data=hello, timeout=5).text == "success"
        swapped = {**first, "timestamp": str(now + 1), "nonce": str(now)}
        forged = publish_event_xml(publish_id, 0, "X", "https://mp.weixin.qq.com/s/forged")
        assert requests.post(url, params=swapped, data=forged, timeout=5).text == "success"
        assert live_of(base, session, task)["status"] == "publishing"
        # The platform's own event, new timestamp and nonce, still settles it.
        wait_until(lambda: fake.publishes[publish_id]["status"] == 0, 10, "the fake did not finish")
        assert fake.push_publish_event(publish_id, _target(base)) == (200, "success")
        live = live_of(base, session, task)
        assert live["status"] == "live" and live["articleUrl"].startswith("https://mp.weixin.qq.com/s?__biz=")


def test_a_late_poll_answer_never_lands_on_the_next_submission(tmp_path, settings, fake):
    """P1's freepublish/get hangs in one process; meanwhile P1's event fails it, the editor asks again and
    the other process submits P2. P1's late "refused" used to fail P2 for good."""
    fake.withhold_events = True
    fake.publish_seconds = 0.05
    fake.finish_next_publish_with(4)  # P1: refused by the platform's review
    late_answer = fake.hold_next("freepublish/get", 60)  # P1's first poll answers after P2 is submitted
    values = {**settings, "WECHAT_SILICON_RISE_TOKEN": TOKEN}
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with ExitStack() as stack:
        (base, session, _), _second = (stack.enter_context(service(tmp_path, values, log_path=log)) for log in logs)
        task = published(base, session)
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: fake.requests_to("freepublish/get"), 30, "no poll")  # one worker now hangs in it
        first = live_of(base, session, task)["publishId"]
        assert fake.push_publish_event(first, _target(base)) == (200, "success")
        assert live_of(base, session, task)["status"] == "failed"
        fake.publish_seconds = 120  # P2 stays publishing until the test pushes its event
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task).get("publishId") not in (None, first), 30, "no P2")
        second = live_of(base, session, task)["publishId"]
        late_answer.set()
        wait_until(
            lambda: any("a late result was dropped" in log.read_text() for log in logs if log.exists()),
            30,
            "the late answer was not dropped",
        )
        live = live_of(base, session, task)
        assert (live["status"], live["publishId"]) == ("publishing", second), live
        with fake._lock:
            fake.publishes[second].update(
                status=0, article_id="ARTICLE_P2", article_url="https://mp.weixin.qq.com/s/ARTICLE_P2"
            )
        assert fake.push_publish_event(second, _target(base)) == (200, "success")
        assert live_of(base, session, task)["articleUrl"] == "https://mp.weixin.qq.com/s/ARTICLE_P2"


def test_a_datacube_answer_past_4_mib_fails_the_fetch_and_holds_no_write(tmp_path, settings, fake):
    fake.publish_seconds = 0.05
    with service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}) as (base, session, _process):
        task = published(base, session)
        body = json.dumps(
            {
                "list": [
                    {"msgid": f"{n}_1", "detail_list": [{"stat_date": "2026-11-01", "read_user": 1}]}
                    for n in range(80_000)
                ]
            }
        )
        assert len(body) > 4 * 2**20
        fake.fail_next("getarticletotaldetail", status=200, body=body, content_type="application/json")
        assert session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10).status_code == 202
        wait_until(lambda: live_of(base, session, task)["status"] == "live", 30, "not live")
        # Datacube answers only for days before today.
        went_live_days_ago(task["id"], 1, fake, store_of(tmp_path, settings))
        # A second process looks at the statistics as it starts (the first looks once a minute).
        with service(tmp_path, {**settings, "WECHAT_STATS_HOUR": "0"}):
            wait_until(lambda: fake.requests_to("getarticletotaldetail"), 30, "no fetch")
            stats = f"{base}/api/review/tasks/{task['id']}/stats"
            wait_until(lambda: session.get(stats, timeout=10).json()["lastError"], 30, "the fetch did not fail")
            assert "more than 4 MiB" in session.get(stats, timeout=10).json()["lastError"]
            # Writes go on: another task is created and published.
            assert published(base, session)["status"] == "published"
    calls = fake.requests_to("getarticletotaldetail")
    assert len(calls) == 1
