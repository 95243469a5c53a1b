"""The rework diff is bounded and computed outside the write lock (docs/api.md §15): a huge body costs
other writers nothing, a text too large to compare says so on the page in both languages, and the diff of
an ordinary edit is difflib's, by line and then by character."""

import difflib
import random
import threading
import time

import pytest
import requests

from models import ReviewTask, db, immediate
from services.review import changes, patching
from tests.helpers.app import ADMIN_PASSWORD, AGENT_TOKEN, create_admin
from tests.helpers.feedback import WEB, payload
from tests.helpers.review import (
    article_payload,
    article_selections,
    body_option,
    create_task,
    decision_url,
    live_server,
    locked_except,
    make_asset,
    patch_url,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

AGENT = {"x-review-agent-token": AGENT_TOKEN}
HUGE = "a\n" * 12_000  # 12,000 equal lines: quadratic for an unbounded SequenceMatcher without autojunk


def rejected_body(client, admin_client, agent_headers, app, body):
    """An article whose body (`body`) is sent back to the agent; returns the task."""
    cover = make_asset(app)
    task = create_task(
        client,
        agent_headers,
        article_payload(candidates={**article_payload()["candidates"], "bodyOptions": [body_option("opt-a", body)]}),
    )
    selections = article_selections(task, cover)
    response = admin_client.post(
        decision_url(task),
        json={
            "action": "reject_rework",
            "rejectionReason": "style_mismatch",
            "rejectedElements": ["body"],
            "selections": selections,
            "lockedSelections": locked_except(selections, ["body"]),
        },
    )
    assert response.status_code == 200, response.get_json()
    return task


def rework_event(task):
    return [event for event in task["timeline"] if event["type"] == "rework_submitted"][-1]


def pieces(before, after, ops):
    """Both texts back from the ops: what "=" and "-" cover is `before`, "=" and "+" `after`."""
    old, new, i, j = [], [], 0, 0
    for op, length in ops:
        if op != "+":
            old.append(before[i : i + length])
            i += length
        if op != "-":
            new.append(after[j : j + length])
            j += length
    return "".join(old), "".join(new)


# ---- the bounded matcher ---------------------------------------------------------------------------


def test_the_matcher_finds_what_difflib_finds():
    rnd = random.Random(7)
    for _ in range(1500):
        alphabet = rnd.choice(["ab", "abc", "abcdef", "的一是了不"])
        a = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 50)))
        b = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 50)))
        expected = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()[:-1]
        assert changes.matching_blocks(a, b, changes._Budget(10**9)) == [tuple(m) for m in expected]
        lines_a, lines_b = list(a * 5), list(b * 5)  # 200 and more: popular lines as difflib's autojunk
        expected = difflib.SequenceMatcher(None, lines_a, lines_b).get_matching_blocks()[:-1]
        found = changes.matching_blocks(lines_a, lines_b, changes._Budget(10**9), popular=True)
        assert found == [tuple(m) for m in expected]


def test_every_diff_gives_both_texts_back():
    rnd = random.Random(11)
    words = ["芯片", "的", "未来", "\n", "\n\n", "。", "散热", "a", " ", "# 标题\n"]
    for _ in range(800):
        before = "".join(rnd.choice(words) for _ in range(rnd.randint(0, 300)))
        after = list(before)
        for _ in range(rnd.randint(0, 6)):
            at = rnd.randint(0, len(after))
            after[at : at + rnd.randint(0, 4)] = rnd.choice(words)
        after = "".join(after)
        assert pieces(before, after, changes.text_ops(before, after)) == (before, after)


def test_a_long_body_changed_in_a_few_lines_is_diffed_by_line_then_by_character():
    lines = [f"第{n}段：内容审核的实践，第{n}次。\n" for n in range(3000)] + ["\n"] * 3000
    random.Random(1).shuffle(lines)
    before = "".join(lines)
    edited = list(lines)
    edited[100] = edited[100].replace("审核", "复核")
    edited.insert(2000, "新加的一段。\n")
    after = "".join(edited)
    ops = changes.text_ops(before, after)
    assert pieces(before, after, ops) == (before, after)
    changed = [(op, text) for op, text in changes.segments(before, after, ops) if op != "="]
    assert changed == [("-", "审"), ("+", "复"), ("+", "新加的一段。\n")]


def test_twelve_thousand_equal_lines_and_one_more_character():
    ops = changes.text_ops(HUGE, HUGE + "x", steps=10_000)  # the common lines cost next to nothing
    assert ops == [["=", len(HUGE)], ["+", 1]]
    assert changes.text_ops("x" * 200_000, "x" * 100_000 + "y" + "x" * 99_999, steps=10_000) == [
        ["=", 100_000],
        ["-", 1],
        ["+", 1],
        ["=", 99_999],
    ]


def test_past_the_budget_a_text_is_too_large_to_compare():
    before, after = "a" * 2000, "ab" * 1000  # 2,000 blocks of one character: ~10^10 steps unbounded
    assert changes.text_ops(before, after) is None
    assert changes.segments(before, after) is None
    assert changes.record({"body": before}, {"body": after})["textDiff"] == {"body": None}
    assert changes.text_ops("字" * 3000, "另" * 3000) == [["-", 3000], ["+", 3000]]  # over the pair limit: whole


# ---- through the service ---------------------------------------------------------------------------


def test_the_page_says_a_text_too_large_to_compare_in_both_languages(app, client, admin_client, agent_headers):
    task = rejected_body(client, admin_client, agent_headers, app, "a" * 2000)
    done = client.patch(patch_url(task), json={"body": "ab" * 1000}, headers=agent_headers)
    assert done.status_code == 200, done.get_json()
    event = rework_event(done.get_json())
    assert event["data"]["textDiff"] == {"body": None}
    assert event["data"]["changes"]["body"] == {"before": "a" * 2000, "after": "ab" * 1000}
    english = admin_client.get(f"/review/{task['id']}", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert "Too large to compare: 2000 characters before, 2000 after." in english
    chinese = admin_client.get(f"/review/{task['id']}", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert "内容过长，无法逐字比较：修改前 2000 字，修改后 2000 字。" in chinese
    assert "<del>" + "a" * 200 not in english  # not shown as a whole removal


def test_the_diff_is_computed_while_other_writes_go_on(app, client, admin_client, agent_headers, monkeypatch):
    """While the diff is computed another thread takes the write lock and finishes: the diff runs
    outside it (inside, the other writer would wait until the PATCH is over)."""
    task = rejected_body(client, admin_client, agent_headers, app, "# 正文\n\n第一段。\n")
    writes = []
    real_record = changes.record

    def record_beside_a_write(selections, values):
        def write():
            with db.connection_context(), immediate():
                ReviewTask.select().count()
            writes.append("done")

        other = threading.Thread(target=write)
        other.start()
        other.join(timeout=20)
        writes.append("finished before the diff" if writes == ["done"] else "waited for the diff")
        return real_record(selections, values)

    monkeypatch.setattr(patching, "record", record_beside_a_write)
    done = client.patch(patch_url(task), json={"body": "# 正文\n\n第一段，改过。\n"}, headers=agent_headers)
    assert done.status_code == 200, done.get_json()
    assert writes[-1] == "finished before the diff"
    assert rework_event(done.get_json())["data"]["textDiff"]["body"]


def test_a_base_changed_meanwhile_is_diffed_again(app, client, admin_client, agent_headers, monkeypatch):
    """Another write changes the rejected body between the read and the lock: the recorded `before` and
    diff are those of the value the PATCH really replaced."""
    task = rejected_body(client, admin_client, agent_headers, app, "# 正文\n\n原来的一段。\n")
    calls = []
    real_record = changes.record

    def record_then_change(selections, values):
        calls.append(dict(selections))
        if len(calls) == 1:
            with immediate():  # on the request's own connection
                row = ReviewTask.get(ReviewTask.task_id == task["id"])
                row.selections = {**row.selections, "body": "# 正文\n\n别人改的一段。\n"}
                row.save()
        return real_record(selections, values)

    monkeypatch.setattr(patching, "record", record_then_change)
    done = client.patch(patch_url(task), json={"body": "# 正文\n\n智能体的一段。\n"}, headers=agent_headers)
    assert done.status_code == 200, done.get_json()
    assert [c["body"] for c in calls] == ["# 正文\n\n原来的一段。\n", "# 正文\n\n别人改的一段。\n"]
    data = rework_event(done.get_json())["data"]
    assert data["changes"]["body"]["before"] == "# 正文\n\n别人改的一段。\n"
    assert pieces(data["changes"]["body"]["before"], "# 正文\n\n智能体的一段。\n", data["textDiff"]["body"]) == (
        "# 正文\n\n别人改的一段。\n",
        "# 正文\n\n智能体的一段。\n",
    )


# ---- black-box: a served app, a huge rework beside a feedback ----------------------------------------


@pytest.fixture
def server(feedback_app):
    create_admin()
    with live_server(feedback_app) as base:
        admin = requests.Session()
        response = admin.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": ADMIN_PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert response.status_code == 303
        yield base, admin


def served_rework(base, admin, app, body):
    """A task created and its body rejected over HTTP; returns the task."""
    cover = make_asset(app)
    created = requests.post(
        f"{base}/api/review/agent/tasks",
        headers=AGENT,
        timeout=30,
        json=article_payload(
            candidates={**article_payload()["candidates"], "bodyOptions": [body_option("opt-a", body)]}
        ),
    )
    assert created.status_code == 201, created.text
    task = created.json()
    selections = article_selections(task, cover)
    decided = admin.post(
        base + decision_url(task),
        timeout=30,
        json={
            "action": "reject_rework",
            "rejectionReason": "style_mismatch",
            "rejectedElements": ["body"],
            "selections": selections,
            "lockedSelections": locked_except(selections, ["body"]),
        },
    )
    assert decided.status_code == 200, decided.text
    return task


def feedback(base):
    return requests.post(f"{base}/api/feedbacks", json=payload(), headers=WEB, timeout=120)


def rework_beside_a_feedback(base, task, body):
    """The rework PATCH of `body` and a feedback POST released together; (PATCH answer, its seconds,
    the feedback's seconds)."""
    barrier, results = threading.Barrier(2), {}

    def run(name, call):
        barrier.wait(timeout=10)
        start = time.perf_counter()
        results[name] = call(), time.perf_counter() - start

    threads = [
        threading.Thread(
            target=run,
            args=(
                "patch",
                lambda: requests.patch(base + patch_url(task), json={"body": body}, headers=AGENT, timeout=120),
            ),
        ),
        threading.Thread(target=run, args=("feedback", lambda: feedback(base))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=130)
    (patched, patch_seconds), (sent, feedback_seconds) = results["patch"], results["feedback"]
    assert patched.status_code == 200 and sent.status_code == 201, (patched.text[:300], sent.text[:300])
    return patched.json(), patch_seconds, feedback_seconds


def test_a_huge_rework_patch_does_not_hold_up_other_writes(feedback_app, server):
    """12,000 equal lines plus one character, PATCHed while a feedback is sent, against the same beside
    12,000 different lines (a longer body, whose diff was always cheap): unbounded and under the lock,
    the PATCH took ~20 s and the feedback waited for it, ~100 times the ordinary PATCH; now neither takes
    much longer than the ordinary PATCH (wide margins)."""
    base, admin = server
    ordinary_lines = "".join(f"{n}\n" for n in range(12_000))
    ordinary = served_rework(base, admin, feedback_app, ordinary_lines)
    huge = served_rework(base, admin, feedback_app, HUGE)
    _task, ordinary_patch, _feedback = rework_beside_a_feedback(base, ordinary, ordinary_lines + "x")
    task, huge_patch, huge_feedback = rework_beside_a_feedback(base, huge, HUGE + "x")
    assert rework_event(task)["data"]["textDiff"]["body"] == [["=", len(HUGE)], ["+", 1]]
    assert huge_feedback < 10 * ordinary_patch, (huge_feedback, ordinary_patch)
    assert huge_patch < 10 * ordinary_patch, (huge_patch, ordinary_patch)
