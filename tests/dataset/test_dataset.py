"""Decisions as data (docs/api.md §20): a task built through the real HTTP flow — a prompt, a rejected title
and the agent's replacement, an edited body, an approval, readers' figures — and each format's lines exactly."""

import json
import re
from pathlib import Path

import pytest

from models import ReviewTask, TaskDayStats, TaskLive, TimelineEvent, db
from rules.ids import now_iso
from services.export.dataset import dataset_query, raw_records
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.comments import export
from tests.helpers.dataset_memory import export_peak
from tests.helpers.review import (
    article_payload,
    article_selections,
    body_option,
    create_task,
    decision_url,
    locked_except,
    make_asset,
    patch_url,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

PROMPT = "写一篇面向大众的文章：芯片的下一个十年"
OPTION_A, OPTION_B = "# 芯片\n\n正文 A", "# 芯片\n\n正文 B"
EDITED = "# 芯片\n\n正文 A，编辑补上了一句。"
REJECTED_TITLE, NEW_TITLE = "芯片的未来在哪里", "芯片三问"
REASON = {"category": "style_mismatch", "note": "标题太长"}
FIGURES = {
    "read_user": 120,
    "share_user": 7,
    "like_user": 9,
    "zaikan_user": 3,
    "collection_user": 5,
    "comment_count": 2,
}


def ok(response, status=200):
    assert response.status_code == status, response.get_data(as_text=True)[:800]
    return response.get_json()


def reject_title(admin_client, task, cover, note="标题太长"):
    selections = article_selections(task, cover)
    return ok(
        admin_client.post(
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
    )


def go_live_with_figures(task):
    """The task's article live on the platform, with two days of readers' figures (as the daily fetch stores)."""
    now = now_iso()
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        TaskLive.create(
            task=row,
            account=row.public_account,
            draft_media_id="media-1",
            status="live",
            at=now,
            publish_id="pub-1",
            msg_data_id="msg-1",
            article_id="art-1",
            article_url="https://mp.weixin.qq.com/s/art-1",
            live_at=now,
            created_at=now,
            updated_at=now,
        )
        TaskDayStats.create(task=row, day="2026-11-25", fetched_at=now, **FIGURES)
        TaskDayStats.create(
            task=row,
            day="2026-11-26",
            read_user=30,
            share_user=None,
            like_user=1,
            zaikan_user=None,
            collection_user=0,
            comment_count=None,
            fetched_at=now,
        )


def decided_at(task):
    with db.connection_context():
        return ReviewTask.get(ReviewTask.task_id == task["id"]).decided_at


@pytest.fixture
def story(app, client, admin_client, agent_headers):
    """Three tasks: `plain` approved first (no prompt), then `main` (the whole story), and `open` rejected
    last, still waiting for its rework; a fourth waits in review and is no decision."""
    cover = make_asset(app, 900, 500)
    main = create_task(
        client, agent_headers, article_payload([cover["url"]], context={"prompt": PROMPT, "model": "writer-7b"})
    )
    reject_title(admin_client, main, cover)
    reworked = ok(client.patch(patch_url(main), json={"title": NEW_TITLE}, headers=agent_headers))
    assert reworked["status"] == "pending_review"

    plain = create_task(client, agent_headers, article_payload([cover["url"]]))
    ok(
        admin_client.post(
            decision_url(plain),
            json={"action": "approve_without_publish", "selections": article_selections(plain, cover)},
        )
    )

    final = {**article_selections(reworked, cover), "title": NEW_TITLE, "body": EDITED}
    main = ok(
        admin_client.post(
            decision_url(main),
            json={
                "action": "approve_without_publish",
                "selections": final,
                "bodyDraft": {"sourceBodyCandidateId": "opt-a", "markdown": EDITED},
            },
        )
    )
    go_live_with_figures(main)

    opened = create_task(client, agent_headers, article_payload([cover["url"]], context={"prompt": "另一篇"}))
    reject_title(admin_client, opened, cover, note=None)
    create_task(client, agent_headers, article_payload([cover["url"]], context={"prompt": "还在审"}))
    return {"cover": cover, "main": main, "plain": plain, "open": opened}


def test_a_created_task_keeps_the_agents_context(client, admin_client, agent_headers):
    task = create_task(client, agent_headers, article_payload(context={"prompt": PROMPT}))
    assert task["context"] == {"prompt": PROMPT, "model": None}
    assert ok(admin_client.get(f"/api/review/tasks/{task['id']}"))["context"] == {"prompt": PROMPT, "model": None}
    assert create_task(client, agent_headers, article_payload())["context"] is None
    for bad, field in (
        ({"prompt": "x" * 20_001}, "context.prompt"),
        ({"model": "m" * 201}, "context.model"),
        ({"prompt": "  "}, "context.prompt"),
        ({"temperature": 0.2}, "context.temperature"),
    ):
        refused = client.post("/api/review/agent/tasks", json=article_payload(context=bad), headers=agent_headers)
        assert field in assert_error(refused, 400, "validation_error")["details"]


def test_raw_is_one_line_per_decided_task_oldest_decision_first(story, admin_client):
    main, cover = story["main"], story["cover"]
    lines = export(admin_client, "raw")
    assert [line["taskId"] for line in lines] == [story["plain"]["id"], main["id"], story["open"]["id"]]
    assert lines[1] == {
        "taskId": main["id"],
        "account": "silicon-rise",
        "kind": "article",
        "context": {"prompt": PROMPT, "model": "writer-7b"},
        "decision": "approved",
        "decidedAt": decided_at(main),
        "candidates": main["candidates"],
        "chosen": {
            "author": "硅基君",
            "title": NEW_TITLE,
            "summary": "一篇关于芯片的短文",
            "body": OPTION_A,
            "bodyImages": [],
            "coverImage": {"assetId": cover["assetId"]},
        },
        "final": {
            "author": "硅基君",
            "title": NEW_TITLE,
            "summary": "一篇关于芯片的短文",
            "body": EDITED,
            "bodyImages": [],
            "coverImage": {"assetId": cover["assetId"]},
        },
        "edits": {"body": {"chosen": OPTION_A, "final": EDITED}},
        "rework": [{"field": "title", "reason": REASON, "before": REJECTED_TITLE, "after": NEW_TITLE}],
        "live": ok(admin_client.get(f"/api/review/tasks/{main['id']}"))["live"],
        "readers": {
            "days": [
                {
                    "date": "2026-11-25",
                    "readUser": 120,
                    "shareUser": 7,
                    "likeUser": 9,
                    "zaikanUser": 3,
                    "collectionUser": 5,
                    "commentCount": 2,
                },
                {
                    "date": "2026-11-26",
                    "readUser": 30,
                    "shareUser": None,
                    "likeUser": 1,
                    "zaikanUser": None,
                    "collectionUser": 0,
                    "commentCount": None,
                },
            ],
            "totals": {
                "readUser": 150,
                "shareUser": 7,
                "likeUser": 10,
                "zaikanUser": 3,
                "collectionUser": 5,
                "commentCount": 2,
            },
        },
        "comments": [],  # none fetched (tests/dataset/test_dataset_comments.py has them)
    }
    assert lines[1]["live"]["articleUrl"] == "https://mp.weixin.qq.com/s/art-1"
    # The decision's moment: between the rework and the approval's event.
    events = {event["type"]: event["at"] for event in main["timeline"]}
    assert events["returned_to_review"] <= lines[1]["decidedAt"] <= events["approved"]
    plain, opened = lines[0], lines[2]
    assert plain["context"] is None and plain["rework"] == [] and plain["edits"] == {} and plain["readers"] is None
    assert plain["live"] is None and plain["decidedAt"] < lines[1]["decidedAt"] < opened["decidedAt"]
    # Still waiting for its rework: nothing approved, the rejected title as the task holds it.
    assert opened["decision"] == "rejected" and opened["final"] is None
    assert opened["rework"] == [
        {
            "field": "title",
            "reason": {"category": "style_mismatch", "note": None},
            "before": REJECTED_TITLE,
            "after": None,
        }
    ]


def test_sft_is_the_prompt_and_the_approved_article(story, admin_client):
    assert export(admin_client, "sft") == [
        {
            "messages": [
                {"role": "user", "content": PROMPT},
                {"role": "assistant", "content": f"# {NEW_TITLE}\n\n{EDITED}"},
            ]
        }
    ]


def test_dpo_prefers_the_approved_replacement_and_the_picked_option(story, admin_client):
    assert export(admin_client, "dpo") == [
        {
            "input": {"messages": [{"role": "user", "content": f"{PROMPT}\n\n[title]"}]},
            "preferred_output": [{"role": "assistant", "content": NEW_TITLE}],
            "non_preferred_output": [{"role": "assistant", "content": REJECTED_TITLE}],
        },
        {
            "input": {"messages": [{"role": "user", "content": PROMPT}]},
            "preferred_output": [{"role": "assistant", "content": f"# {NEW_TITLE}\n\n{OPTION_A}"}],
            "non_preferred_output": [{"role": "assistant", "content": f"# {NEW_TITLE}\n\n{OPTION_B}"}],
        },
    ]


def is_conversational_preference(line):
    """TRL's test for a conversational preference example (trl.data_utils.is_conversational, for DPOTrainer):
    `prompt`, `chosen` and `rejected` are lists of {role, content} messages; TRL itself is not a dependency."""
    return set(line) == {"prompt", "chosen", "rejected"} and all(
        isinstance(line[key], list)
        and line[key]
        and all(isinstance(message, dict) and set(message) == {"role", "content"} for message in line[key])
        for key in line
    )


def test_trl_dpo_is_the_dpo_pairs_in_trls_conversational_shape(story, admin_client):
    """docs/api.md §20: TRL does not recognise `dpo` (OpenAI's) as conversational; `trl-dpo` is its shape."""
    lines, pairs = export(admin_client, "trl-dpo"), export(admin_client, "dpo")
    assert not any(is_conversational_preference(line) for line in pairs)
    assert all(is_conversational_preference(line) for line in lines) and len(lines) == len(pairs) == 2
    for line, pair in zip(lines, pairs, strict=True):
        assert [message["role"] for message in line["prompt"]] == ["user"]
        assert line["chosen"] == pair["preferred_output"] and line["rejected"] == pair["non_preferred_output"]
        assert [message["role"] for message in line["chosen"] + line["rejected"]] == ["assistant", "assistant"]
        assert line["prompt"] == pair["input"]["messages"]
    assert lines[0] == {
        "prompt": [{"role": "user", "content": f"{PROMPT}\n\n[title]"}],
        "chosen": [{"role": "assistant", "content": NEW_TITLE}],
        "rejected": [{"role": "assistant", "content": REJECTED_TITLE}],
    }


def test_kto_labels_approved_articles_true_and_rejected_values_false(story, admin_client):
    assert export(admin_client, "kto") == [
        {"prompt": PROMPT, "completion": f"# {NEW_TITLE}\n\n{EDITED}", "label": True},
        {"prompt": f"{PROMPT}\n\n[title]", "completion": REJECTED_TITLE, "label": False},
        {"prompt": "另一篇\n\n[title]", "completion": REJECTED_TITLE, "label": False},
    ]


def test_line_separators_in_the_texts_leave_one_record_a_line(app, client, admin_client, agent_headers):
    """docs/api.md §20: U+2028, U+2029 and U+0085 are written escaped; before, a reader splitting the Unicode
    way (str.splitlines, as Python's text readers do) read each record as several lines."""
    separators = "\u2028\u2029\x85"
    cover = make_asset(app, 900, 500)
    prompts = [f"第{number}段{separators}第二段" for number in range(3)]
    for prompt in prompts:
        payload = article_payload([cover["url"]], context={"prompt": prompt})
        payload["candidates"]["titles"][0] = f"标题{separators}续"
        payload["candidates"]["bodyOptions"][0]["content"] = f"# 芯片\n\n正文{separators}A"
        task = create_task(client, agent_headers, payload)
        ok(
            admin_client.post(
                decision_url(task),
                json={"action": "approve_without_publish", "selections": article_selections(task, cover)},
            )
        )
    for name, count in (("raw", 3), ("sft", 3), ("dpo", 6), ("trl-dpo", 6), ("kto", 3)):
        text = admin_client.get("/api/review/dataset", query_string={"format": name}).get_data(as_text=True)
        assert not set(separators) & set(text), name
        lines = text.splitlines()
        assert len(lines) == text.count("\n") == count, (name, len(lines))
        records = [json.loads(line) for line in lines]
        assert separators in json.dumps(records, ensure_ascii=False), name  # the characters themselves come back
    assert [record["context"]["prompt"] for record in export(admin_client, "raw")] == prompts


def _paragraphs(seed, chars):
    line = f"第{seed}稿：" + "半导体产业正在经历新的变化，先进封装把几颗芯片装进一个壳里，散热和良率成了新的难题。"
    return "# 背景\n\n" + "\n\n".join(f"{number}. {line}" for number in range(chars // (len(line) + 6)))


def big_decided_task(app, client, admin_client, agent_headers):
    """A task of the size teams meet (bench/bench_dataset.py --size big): four long body options, 50 titles
    and summaries, its body rejected twice and replaced by the agent, then approved; its stored bytes."""
    cover = make_asset(app, 900, 500)
    payload = article_payload([cover["url"]], context={"prompt": "写一篇芯片科普，" + "要讲清楚先进封装。" * 200})
    payload["candidates"]["titles"] = [f"芯片的下一个十年（第{n}版）" for n in range(50)]
    payload["candidates"]["summaries"] = [f"第{n}版：" + "从制程到封装，一次看懂。" * 7 for n in range(50)]
    payload["candidates"]["bodyOptions"] = [body_option(f"long-{n}", _paragraphs(n, 10_000)) for n in range(4)]
    task = create_task(client, agent_headers, payload)
    selections = article_selections(task, cover)
    for number in range(2):
        ok(
            admin_client.post(
                decision_url(task),
                json={
                    "action": "reject_rework",
                    "rejectedElements": ["body"],
                    "rejectionReason": "content_quality",
                    "selections": selections,
                    "lockedSelections": locked_except(selections, ["body"]),
                },
            )
        )
        body = _paragraphs(100 + number, 10_000)
        task = ok(client.patch(patch_url(task), json={"body": body}, headers=agent_headers))
        selections = {**selections, "body": body}
    ok(admin_client.post(decision_url(task), json={"action": "approve_without_publish", "selections": selections}))
    with db.connection_context():
        row = ReviewTask.get(ReviewTask.task_id == task["id"])
        texts = [field.db_value(getattr(row, name)) for name, field in ReviewTask._meta.fields.items()]
        texts += [
            json.dumps(event.data, ensure_ascii=False)
            for event in TimelineEvent.select().where(TimelineEvent.task == row)
        ]
        return row, sum(len(text.encode()) for text in texts if isinstance(text, str))


def test_the_exports_memory_stays_within_a_few_tasks_of_the_sizes_teams_meet(app, client, admin_client, agent_headers):
    """docs/performance.md "Tasks of the size teams meet": tasks of ~350 KB are read one at a time (a bound on stored
    characters per read, not only ten rows), their lines written member by member and their pairs one by one;
    before, ten whole tasks at a time held ~16 times a task."""
    template, stored = big_decided_task(app, client, admin_client, agent_headers)
    assert 250_000 < stored < 600_000, stored
    with db.connection_context():
        fields = [name for name in ReviewTask._meta.fields if name != "id"]
        events = list(TimelineEvent.select().where(TimelineEvent.task == template))
        for number in range(24):
            values = {name: getattr(template, name) for name in fields}
            values.update(task_id=f"clone{number:04d}", decided_at=f"2020-01-01T00:00:{number:02d}.000Z")
            clone = ReviewTask.create(**values)
            for index, event in enumerate(events):
                TimelineEvent.create(
                    **{
                        **{name: getattr(event, name) for name in TimelineEvent._meta.fields if name != "id"},
                        "task": clone,
                        "event_id": f"clone{number}-{index}",
                    }
                )
    for name in ("raw", "dpo", "trl-dpo"):
        lines, peak = export_peak(app, name)  # in a process of its own (tests/helpers/dataset_memory.py)
        assert lines == 25 if name == "raw" else lines > 25 * 50, (name, lines)  # every task was written
        assert peak < 8 * stored, (name, peak / stored)


def test_filters_credentials_and_refusals(story, app, client, admin_client, agent_headers):
    main = story["main"]
    day = decided_at(main)[:10]
    assert export(client, "raw", headers=agent_headers) == export(admin_client, "raw")  # the agent reads it too
    assert [line["taskId"] for line in export(admin_client, "raw", limit=2)] == [story["plain"]["id"], main["id"]]
    assert len(export(admin_client, "raw", **{"from": day, "to": day})) == 3  # a date-only `to` covers its day
    assert export(admin_client, "raw", **{"from": "2999-01-01"}) == []
    assert export(admin_client, "raw", to="2000-01-01") == []
    assert export(admin_client, "raw", account="carbon-fitness") == []
    assert len(export(admin_client, "sft", account="silicon-rise")) == 1
    assert export(admin_client, "raw", **{"from": decided_at(main)})[0]["taskId"] == main["id"]
    for query, field in (
        ({"format": "csv"}, "format"),
        ({}, "format"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"account": "moon"}, "account"),
        ({"from": "2026-11-02", "to": "2026-11-01"}, "from"),
        ({"limit": "0"}, "limit"),
    ):
        query = {"format": "raw", **query} if field != "format" else query
        refused = admin_client.get("/api/review/dataset", query_string=query)
        assert field in assert_error(refused, 400, "validation_error")["details"], query
    assert_error(client.get("/api/review/dataset?format=raw"), 401, "unauthorized")
    create_admin("reader", permissions="feedback")
    other = app.test_client()
    login(other, "reader")
    assert_error(other.get("/api/review/dataset?format=raw"), 403, "forbidden")


def test_pages_of_any_size_give_the_same_lines_and_skip_tasks_back_in_review(
    story, client, admin_client, agent_headers
):
    back = create_task(client, agent_headers, article_payload([story["cover"]["url"]], context={"prompt": "回来了"}))
    reject_title(admin_client, back, story["cover"])
    assert (
        ok(client.patch(patch_url(back), json={"title": NEW_TITLE}, headers=agent_headers))["status"]
        == "pending_review"
    )  # rejected once, waiting for a decision again: no line until it has one
    every = export(admin_client, "raw")
    assert back["id"] not in {line["taskId"] for line in every} and len(every) == 3
    for page in (1, 2, 3):
        with db.connection_context():
            assert list(raw_records(dataset_query("raw"), page=page)) == every, page
        with db.connection_context():
            assert list(raw_records(dataset_query("raw", account="silicon-rise"), page=page)) == every
            assert list(raw_records(dataset_query("raw", account="carbon-fitness"), page=page)) == []


def test_the_command_writes_the_same_lines(story, app, admin_client, tmp_path):
    runner = app.test_cli_runner()
    target = tmp_path / "dpo.jsonl"
    result = runner.invoke(args=["export-dataset", "--format", "dpo", "--output", str(target)])
    assert result.exit_code == 0, result.output
    answer = admin_client.get("/api/review/dataset?format=dpo").get_data(as_text=True)
    assert target.read_text(encoding="utf-8") == answer
    where = "the DATABASE_URL database" if app.config["DATABASE_URL"] else str(tmp_path / "instance" / "review.db")
    assert result.stderr == f"2 dpo lines written to {target} from {where}\n"
    to_stdout = runner.invoke(args=["export-dataset", "--format", "raw", "--account", "silicon-rise"])
    assert to_stdout.exit_code == 0 and to_stdout.stdout == admin_client.get(
        "/api/review/dataset?format=raw&account=silicon-rise"
    ).get_data(as_text=True)
    for args, hint in (
        (["--format", "csv"], "--format"),
        (["--format", "raw", "--from", "soon"], "--from"),
        (["--format", "raw", "--account", "moon"], "--account"),
    ):
        refused = runner.invoke(args=["export-dataset", *args])
        assert refused.exit_code == 2 and hint in refused.output, refused.output


def test_an_older_database_gains_the_columns_and_its_decisions(make_app, client, admin_client, agent_headers, story):
    """Schema 16 had neither column: the upgrade adds them and dates each decided task by its timeline."""
    with db.connection_context():
        expected = {row.task_id: row.decided_at for row in ReviewTask.select() if row.decided_at}
        db.execute_sql("DROP INDEX IF EXISTS review_task_decided_at")
        db.execute_sql("ALTER TABLE review_task DROP COLUMN decided_at")
        db.execute_sql("ALTER TABLE review_task DROP COLUMN context")
        db.execute_sql("UPDATE schema_version SET version = 16")
    make_app()  # restart: the upgrade runs
    with db.connection_context():
        rows = {row.task_id: row for row in ReviewTask.select()}
        last = {
            row.task.task_id: row.at
            for row in TimelineEvent.select()
            .where(TimelineEvent.type.in_(("approved", "rejected")))
            .order_by(TimelineEvent.id)
        }
    assert {task_id: row.decided_at for task_id, row in rows.items() if row.decided_at} == last
    assert set(last) == set(expected) and all(row.context is None for row in rows.values())
    assert len(export(admin_client, "raw")) == 3


def test_the_readmes_examples_have_each_formats_shape(story, admin_client):
    """Three lines of each format in the README, each a JSON object with the keys the export writes."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n## Decisions as data")
    blocks = re.findall(r"```jsonl\n(.*?)```", readme[start : readme.index("\n## ", start + 1)], re.S)
    assert len(blocks) == 5
    for name, block in zip(("raw", "sft", "dpo", "trl-dpo", "kto"), blocks, strict=True):
        shown = [json.loads(line) for line in block.splitlines()]
        real = export(admin_client, name)
        assert len(shown) == 3 and all(set(line) == set(real[0]) for line in shown), name
        if name == "raw":
            assert all(set(entry) == set(real[1]["rework"][0]) for line in shown for entry in line["rework"])
            assert set(shown[0]["readers"]) == set(real[1]["readers"])
