"""Readers' comments in the dataset (docs/api.md §20, §23): a live task with a prompt hears three comments on
the fake platform; they are fetched by `flask --app app fetch-comments`, the agent proposes replies over HTTP
and an editor sends one edited, one unchanged and leaves one waiting. `raw` carries them, `dpo` and `trl-dpo`
pair the edited reply over the proposal, `kto` labels the proposals, and no format names a reader."""

import json
import time

import pytest

from models import CommentProposal, ReaderComment, ReviewTask, db
from rules.ids import now_iso
from tests.helpers.app import AGENT_TOKEN, built_app
from tests.helpers.comments import article, export, fetch
from tests.helpers.dataset_memory import export_peak
from tests.helpers.publishing import live_task, platform_settings

pytestmark = pytest.mark.both_stores
AGENT = {"x-review-agent-token": AGENT_TOKEN}
PROMPT = "写一篇芯片科普"
OPENID = "oReaderSecretOpenid"
ASKED, PRAISED, WAITING = "when is part two?", "great article", "what about RISC-V?"


@pytest.fixture
def app(make_app, fake):
    fake.publish_seconds = 0.05
    with built_app(
        make_app,
        **platform_settings(fake),
        WECHAT_LIVE_WORKER_ENABLED=True,
        WECHAT_EDITIONS_ENABLED=True,
        WECHAT_PUBLISH_POLL_DELAYS="0.1,0.2,0.4,0.8,1.6",
        WECHAT_COMMENTS_ENABLED=False,  # fetched by the command
    ) as application:
        yield application


def propose(client, task, comment, content):
    url = f"/api/review/agent/tasks/{task['id']}/comments/{comment['id']}/proposals"
    answer = client.post(url, json={"content": content}, headers=AGENT)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["proposals"][-1]


def reply(admin_client, task, comment, content, proposal):
    url = f"/api/review/tasks/{task['id']}/comments/{comment['id']}/reply"
    answer = admin_client.post(url, json={"content": content, "proposalId": proposal["id"]})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


@pytest.fixture
def answered(app, client, admin_client, agent_headers, fake):
    """The live task after the agent's proposals and the editor's replies."""
    task = live_task(app, admin_client, agent_headers, days_ago=1, context={"prompt": PROMPT})
    now = int(time.time())
    for seconds, text in ((30, ASKED), (20, PRAISED), (10, WAITING)):
        fake.add_comment(*article(task), text, openid=OPENID, create_time=now - seconds)
    fetch(app)
    listed = admin_client.get(f"/api/review/tasks/{task['id']}/comments").get_json()["comments"]
    by_text = {comment["content"]: comment for comment in listed}
    first = propose(client, task, by_text[ASKED], "Soon!")
    propose(client, task, by_text[ASKED], "Next week")
    reply(admin_client, task, by_text[ASKED], "Soon, next Monday!", first)  # edited; "Next week" discarded
    reply(admin_client, task, by_text[PRAISED], "Thank you!", propose(client, task, by_text[PRAISED], "Thank you!"))
    propose(client, task, by_text[WAITING], "Good question")
    return task


def test_raw_carries_each_comment_its_proposals_and_the_reply(answered, admin_client):
    (line,) = [line for line in export(admin_client, "raw") if line["taskId"] == answered["id"]]
    assert line["comments"] == [
        {
            "content": ASKED,
            "proposals": [{"content": "Soon!", "state": "edited"}, {"content": "Next week", "state": "discarded"}],
            "reply": "Soon, next Monday!",
        },
        {"content": PRAISED, "proposals": [{"content": "Thank you!", "state": "sent"}], "reply": "Thank you!"},
        {"content": WAITING, "proposals": [{"content": "Good question", "state": "proposed"}], "reply": None},
    ]


def test_a_task_without_comments_has_an_empty_list(app, admin_client, agent_headers):
    task = live_task(app, admin_client, agent_headers, days_ago=1, context={"prompt": PROMPT})
    (line,) = [line for line in export(admin_client, "raw") if line["taskId"] == task["id"]]
    assert line["comments"] == []


def test_dpo_prefers_the_sent_reply_over_the_proposal_it_replaced(answered, admin_client):
    user = f"{PROMPT}\n\n[reply]\n{ASKED}"
    pairs = [line for line in export(admin_client, "dpo") if "[reply]" in line["input"]["messages"][0]["content"]]
    assert pairs == [
        {
            "input": {"messages": [{"role": "user", "content": user}]},
            "preferred_output": [{"role": "assistant", "content": "Soon, next Monday!"}],
            "non_preferred_output": [{"role": "assistant", "content": "Soon!"}],
        }
    ]
    trl = [line for line in export(admin_client, "trl-dpo") if "[reply]" in line["prompt"][0]["content"]]
    assert trl == [
        {
            "prompt": [{"role": "user", "content": user}],
            "chosen": [{"role": "assistant", "content": "Soon, next Monday!"}],
            "rejected": [{"role": "assistant", "content": "Soon!"}],
        }
    ]


def test_kto_labels_a_proposal_sent_unchanged_true_and_edited_or_discarded_false(answered, admin_client):
    labels = [line for line in export(admin_client, "kto") if "[reply]" in line["prompt"]]
    assert labels == [
        {"prompt": f"{PROMPT}\n\n[reply]\n{ASKED}", "completion": "Soon!", "label": False},
        {"prompt": f"{PROMPT}\n\n[reply]\n{ASKED}", "completion": "Next week", "label": False},
        {"prompt": f"{PROMPT}\n\n[reply]\n{PRAISED}", "completion": "Thank you!", "label": True},
    ]  # the proposal still waiting has no label


def test_no_format_names_a_reader(answered, admin_client):
    reader = admin_client.get(f"/api/review/tasks/{answered['id']}/comments").get_json()["comments"][0]["reader"]
    for format in ("raw", "sft", "dpo", "trl-dpo", "kto"):
        text = json.dumps(export(admin_client, format), ensure_ascii=False)
        assert ASKED in text or format == "sft", format  # the comments are there (sft has none)
        assert OPENID not in text and "openid" not in text.lower(), format
        assert reader not in text and '"reader"' not in text, format


def test_tasks_with_many_comments_are_read_a_few_comments_at_a_time(app, client, admin_client, agent_headers):
    """docs/performance.md "The dataset export": a task's comments count in the stored characters a read
    takes, so tasks of hundreds of long comments are read one at a time, not ten together."""
    task = live_task(app, admin_client, agent_headers, days_ago=1, context={"prompt": PROMPT})
    text = "读者的长留言，" * 140  # ~1,000 characters, as long as a reply may be
    with db.connection_context():
        template = ReviewTask.get(ReviewTask.task_id == task["id"])
        fields = [name for name in ReviewTask._meta.fields if name != "id"]
        now = now_iso()
        for number in range(20):
            values = {name: getattr(template, name) for name in fields}
            values.update(task_id=f"talk{number:04d}", decided_at=f"2020-01-01T00:00:{number:02d}.000Z")
            clone = ReviewTask.create(**values)
            for index in range(120):
                comment = ReaderComment.create(
                    comment_id=f"cm_talk{number}_{index}",
                    task=clone,
                    account=clone.public_account,
                    msg_data_id=f"talk{number}",
                    article_index=0,
                    user_comment_id=index + 1,
                    openid=OPENID,
                    reader="0badcafe",
                    content=text,
                    created_at=now,
                    reply_content=text,
                    fetched_at=now,
                )
                CommentProposal.create(
                    proposal_id=f"cp_talk{number}_{index}",
                    comment=comment,
                    content=text,
                    created_at=now,
                    state="edited",
                )
    one_task = 120 * 3 * len(text) * 2  # a task's comments in memory, as Python holds CJK text (2 bytes each)
    lines, peak = export_peak(app, "raw")  # in a process of its own (tests/helpers/dataset_memory.py)
    assert lines == 21  # every task was written
    # About six times a task's comments (its rows, the line's JSON, its UTF-8 bytes); read ten at a time,
    # as before their size counted, seventeen.
    assert peak < 10 * one_task, peak / one_task
