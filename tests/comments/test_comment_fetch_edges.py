"""Readers' comments at their edges (docs/api.md §23): a fetch whose answer predates an editor's action leaves
what the editor did; a list that shifted while it was paged marks nothing removed; a reply rewritten in WeChat's
back office is nobody's here; a fetch that fails by surprise ends with its reason; a proposal sent as the
agent wrote it is `sent`, whatever spaces end it; odd offsets of /comments."""

import threading
from dataclasses import replace

import pytest

import services.comments.fetching as fetching
from models import ReviewTask, TaskLive, db
from models.comments import CommentFetch, CommentProposal
from services.platform import client as platform_client
from tests.helpers.app import AGENT_TOKEN
from tests.helpers.comments import article, fetch
from tests.helpers.publishing import live_task

AGENT = {"x-review-agent-token": AGENT_TOKEN}


def _comments(http, task):
    answer = http.get(f"/api/review/tasks/{task['id']}/comments")
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def _one(app, admin_client, agent_headers, fake):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comment(*article(task), "写得好，下一篇呢？")
    fetch(app)
    return task, _comments(admin_client, task)["comments"][0]


def _acting_during_the_fetch(monkeypatch, act):
    """The next fetch's platform answer is read, then `act()` runs (an editor's request) before it is stored."""
    real = fetching.list_all

    def racing(*args, **kwargs):
        answer = real(*args, **kwargs)
        done = []
        editor = threading.Thread(target=lambda: done.append(act()))
        editor.start()
        editor.join()
        assert done == [200], done
        return answer

    monkeypatch.setattr(fetching, "list_all", racing)


@pytest.mark.parametrize("action", ["reply", "featured", "delete"])
def test_a_fetch_that_asked_before_an_editor_acted_leaves_what_the_editor_did(
    app, admin_client, agent_headers, fake, monkeypatch, action
):
    """The old fetch wrote the platform's earlier answer over the editor's reply (its author lost for good),
    feature or delete."""
    task, comment = _one(app, admin_client, agent_headers, fake)
    base = f"/api/review/tasks/{task['id']}/comments/{comment['id']}"
    act = {
        "reply": lambda: admin_client.post(base + "/reply", json={"content": "谢谢，明天见"}).status_code,
        "featured": lambda: admin_client.post(base + "/featured", json={"featured": True}).status_code,
        "delete": lambda: admin_client.delete(base).status_code,
    }[action]
    _acting_during_the_fetch(monkeypatch, act)
    fetch(app)
    after = _comments(admin_client, task)["comments"][0]
    if action == "reply":
        assert after["reply"] is not None and after["reply"]["content"] == "谢谢，明天见", after
        assert after["reply"]["by"] == "admin", after
    elif action == "featured":
        assert after["featured"] is True, after
    else:
        assert after["removed"] is True, after
    monkeypatch.undo()
    fetch(app)  # the next fetch asks after the action: the platform agrees, the editor's name stays
    again = _comments(admin_client, task)["comments"][0]
    assert (again["featured"], again["removed"]) == (after["featured"], after["removed"])
    if action == "reply":  # its time now the platform's own
        assert (again["reply"]["content"], again["reply"]["by"]) == ("谢谢，明天见", "admin"), again


def test_a_reply_rewritten_in_the_back_office_is_no_editors_here(app, admin_client, agent_headers, fake):
    task, comment = _one(app, admin_client, agent_headers, fake)
    answered = admin_client.post(
        f"/api/review/tasks/{task['id']}/comments/{comment['id']}/reply", json={"content": "by the editor"}
    )
    assert answered.status_code == 200 and answered.get_json()["reply"]["by"] == "admin"
    for kept in fake.comments.values():
        for item in kept:
            item["reply"] = {"content": "written in the back office", "create_time": item["reply"]["create_time"] + 5}
    fetch(app)
    reply = _comments(admin_client, task)["comments"][0]["reply"]
    assert reply["content"] == "written in the back office" and reply["by"] is None, reply


def test_the_platforms_trimmed_copy_of_an_editors_reply_is_still_the_editors(app, admin_client, agent_headers, fake):
    task, comment = _one(app, admin_client, agent_headers, fake)
    sent = admin_client.post(
        f"/api/review/tasks/{task['id']}/comments/{comment['id']}/reply", json={"content": "谢谢！\n"}
    )
    assert sent.status_code == 200
    for kept in fake.comments.values():
        for item in kept:
            item["reply"]["content"] = item["reply"]["content"].strip()
    fetch(app)
    reply = _comments(admin_client, task)["comments"][0]["reply"]
    assert reply["by"] == "admin", reply


def _paging_while(monkeypatch, fake, task, change):
    """`change()` happens on the platform right after the fetch's first page is answered."""
    real = platform_client.PlatformClient.list_comments
    pages = []

    def paging(self, msg_data_id, index, begin, count, type_=0):
        answer = real(self, msg_data_id, index, begin, count, type_)
        if not pages:
            change()
        pages.append(begin)
        return answer

    monkeypatch.setattr(platform_client.PlatformClient, "list_comments", paging)
    return pages


def test_a_comment_deleted_while_the_list_is_paged_marks_no_other_removed(
    app, admin_client, agent_headers, fake, monkeypatch
):
    """The list shifts up under the pages: the old fetch called a comment still there `removed`."""
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    ids = fake.add_comments(*article(task), 60)
    fetch(app)
    assert sum(not c["removed"] for c in _comments(admin_client, task)["comments"]) == 60
    pages = _paging_while(monkeypatch, fake, task, lambda: fake.remove_comment(*article(task), ids[-1]))
    fetch(app)
    assert pages == [0, 49], pages
    assert [c for c in _comments(admin_client, task)["comments"] if c["removed"]] == []
    monkeypatch.undo()
    fetch(app)  # the next list is read whole: only the deleted one is removed
    removed = [c for c in _comments(admin_client, task)["comments"] if c["removed"]]
    assert len(removed) == 1 and removed[0]["createdAt"] == max(
        c["createdAt"] for c in _comments(admin_client, task)["comments"]
    )


def test_an_empty_page_before_the_total_marks_nothing_removed(app, admin_client, agent_headers, fake, monkeypatch):
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comments(*article(task), 60)
    fetch(app)
    real = platform_client.PlatformClient.list_comments

    def short(self, msg_data_id, index, begin, count, type_=0):
        answer = real(self, msg_data_id, index, begin, count, type_)
        return {**answer, "comment": []} if begin else answer

    monkeypatch.setattr(platform_client.PlatformClient, "list_comments", short)
    fetch(app)
    assert [c for c in _comments(admin_client, task)["comments"] if c["removed"]] == []


def test_an_article_whose_msg_data_id_is_no_number_fails_in_words(app, admin_client, agent_headers, fake):
    """The old fetch stayed `running` with no reason (a ValueError), and the editor's routes answered 500."""
    task, comment = _one(app, admin_client, agent_headers, fake)
    with db.connection_context():
        pk = ReviewTask.get(ReviewTask.task_id == task["id"]).id
        TaskLive.update(msg_data_id="abc").where(TaskLive.task == pk).execute()
        CommentFetch.delete().where(CommentFetch.task == pk).execute()
    result = app.test_cli_runner().invoke(args=["fetch-comments"])
    assert result.exit_code == 1 and "not the platform's number" in result.output, result.output
    with db.connection_context():
        row = CommentFetch.get(CommentFetch.task == pk)
    assert (row.status, row.lease_until) == ("idle", None)
    assert "msg_data_id" in row.last_error, row.last_error
    assert "msg_data_id" in _comments(admin_client, task)["lastError"]
    featured = admin_client.post(
        f"/api/review/tasks/{task['id']}/comments/{comment['id']}/featured", json={"featured": True}
    )
    assert featured.status_code == 502 and featured.get_json()["error"]["code"] == "platform_error", featured.get_json()
    assert _comments(admin_client, task)["comments"][0]["featured"] is False


def test_a_fetch_that_fails_by_surprise_ends_idle_with_its_reason(app, admin_client, agent_headers, fake, monkeypatch):
    task, _comment = _one(app, admin_client, agent_headers, fake)

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(fetching, "list_all", broken)
    result = app.test_cli_runner().invoke(args=["fetch-comments"])
    with db.connection_context():
        row = CommentFetch.get(CommentFetch.task == ReviewTask.get(ReviewTask.task_id == task["id"]).id)
    assert (row.status, row.lease_until) == ("idle", None), result.output
    assert "unexpected RuntimeError" in row.last_error, row.last_error


def test_a_proposal_sent_as_written_is_sent_whatever_spaces_end_it(app, client, admin_client, agent_headers, fake):
    """The page trims the reply box; the old rule called the untouched proposal `edited` (a false kto label)."""
    task, comment = _one(app, admin_client, agent_headers, fake)
    proposed = client.post(
        f"/api/review/agent/tasks/{task['id']}/comments/{comment['id']}/proposals",
        json={"content": "谢谢关注！\n"},
        headers=AGENT,
    )
    assert proposed.status_code == 201, proposed.get_json()
    proposal_id = proposed.get_json()["proposals"][0]["id"]
    sent = admin_client.post(
        f"/api/review/tasks/{task['id']}/comments/{comment['id']}/reply",
        json={"content": "谢谢关注！", "proposalId": proposal_id},
    )
    assert sent.status_code == 200, sent.get_json()
    with db.connection_context():
        assert CommentProposal.get(CommentProposal.proposal_id == proposal_id).state == "sent"


@pytest.mark.parametrize("offset", ["²", "①", "9" * 5000, "-1", ""])
def test_odd_offsets_of_the_comments_page(admin_client, offset):
    page = admin_client.get("/comments", query_string={"offset": offset})
    assert page.status_code == 200, page.status_code


def test_an_account_without_the_comment_privilege_is_not_asked_for_comments(app, admin_client, agent_headers, fake):
    """WECHAT_<CODE>_COMMENTS=false: the old job listed its articles every pass and got 88000 each time."""
    live_task(app, admin_client, agent_headers, days_ago=1)
    settings = app.extensions["settings"]
    closed = replace(
        settings,
        wechat_accounts={code: replace(account, comments=False) for code, account in settings.wechat_accounts.items()},
    )
    with db.connection_context():
        assert fetching.fetch(closed) == {"articles": 0, "stored": 0, "failed": []}
        assert fake.requests_to("comment/list") == []
        assert fetching.fetch(settings)["articles"] == 1  # the same article, privilege given
    assert len(fake.requests_to("comment/list")) == 1


def test_short_pages_make_no_more_calls_than_the_fetch_lease_covers(app, admin_client, agent_headers, fake):
    """A platform that answers fewer comments than asked: the old fetch kept asking until `total` (60 comments
    at 10 a page: 6 calls), past the comment_pages(WECHAT_COMMENTS_MAX) calls its lease covers (2 for 98)."""
    task = live_task(app, admin_client, agent_headers, days_ago=1)
    fake.add_comments(*article(task), 60)
    fake.comment_page_at_most = 10
    settings = replace(app.extensions["settings"], comments_max=98)
    with db.connection_context():
        assert fetching.fetch(settings)["stored"] == 20
        fake.comment_page_at_most = None
        assert len(fake.requests_to("comment/list")) == 2
        assert fetching.fetch(settings, force=True)["stored"] == 40  # the next reads the rest; none marked removed
    assert len(_comments(admin_client, task)["comments"]) == 60


@pytest.mark.parametrize("blank", [" ", "\n\t ", "\u3000"])
def test_a_blank_proposal_or_reply_is_refused_and_nothing_reaches_readers(
    app, client, admin_client, agent_headers, fake, blank
):
    """Spaces alone were taken as a proposal, and sent to readers as a reply (comment/reply/add)."""
    task, comment = _one(app, admin_client, agent_headers, fake)
    base = f"/api/review/tasks/{task['id']}/comments/{comment['id']}"
    proposed = client.post(
        base.replace("/tasks/", "/agent/tasks/") + "/proposals", json={"content": blank}, headers=AGENT
    )
    replied = admin_client.post(base + "/reply", json={"content": blank})
    for answer in (proposed, replied):
        assert answer.status_code == 400, answer.get_json()
        assert answer.get_json()["error"]["details"] == {"content": ["must not be empty"]}
    assert fake.requests_to("comment/reply/add") == []
    assert _comments(admin_client, task)["comments"][0]["proposals"] == []
