"""What the agent changed since the rejection (docs/api.md §15): the before/after record of each rework
PATCH in its timeline event, and the task page's character-level <del>/<ins> per element."""

import re

import pytest

from services.review import changes
from tests.helpers.review import (
    article_selections,
    create_task,
    decision_url,
    full_crop,
    image_post_payload,
    image_post_selections,
    locked_except,
    make_asset,
    patch_url,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def patch(client, headers, task, body):
    response = client.patch(patch_url(task), json=body, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:600]
    return response.get_json()


def reject(admin_client, task, selections, rejected, **extra):
    decision = {
        "action": "reject_rework",
        "rejectionReason": "style_mismatch",
        "rejectedElements": rejected,
        "selections": selections,
        **extra,
    }
    if rejected:
        decision["lockedSelections"] = locked_except(selections, rejected)
    response = admin_client.post(decision_url(task), json=decision)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def last_rework(task):
    return [event for event in task["timeline"] if event["type"] == "rework_submitted"][-1]


def page(admin_client, task):
    response = admin_client.get(f"/review/{task['id']}", headers={"Accept-Language": "en"})
    assert response.status_code == 200
    return response.get_data(as_text=True)


def section(html, role):
    """The HTML of the element carrying data-role=`role` (a <section>)."""
    match = re.search(rf'<section[^>]*data-role="{role}".*?</section>', html, re.S)
    assert match, f"no data-role={role}"
    return match.group(0)


def rejected_article(client, admin_client, agent_headers, article, rejected=("title", "summary")):
    task, cover = article
    selections = {**article_selections(task, cover), "title": "芯片的未来在哪里", "summary": "一篇关于芯片的短文"}
    reject(admin_client, task, selections, list(rejected))
    return task, selections


def test_each_rework_patch_records_before_and_after_of_what_it_changed(client, admin_client, agent_headers, article):
    task, selections = rejected_article(client, admin_client, agent_headers, article)
    first = patch(client, agent_headers, task, {"title": "芯片的明天在哪儿"})
    event = last_rework(first)
    assert event["actor"] == "agent"
    assert event["data"]["changes"] == {"title": {"before": "芯片的未来在哪里", "after": "芯片的明天在哪儿"}}
    assert event["data"]["fields"] == ["title"] and event["data"]["remainingElements"] == ["summary"]

    last = patch(client, agent_headers, task, {"summary": "一篇讲芯片散热的短文"})
    event = last_rework(last)
    assert event["data"]["changes"] == {"summary": {"before": "一篇关于芯片的短文", "after": "一篇讲芯片散热的短文"}}
    assert last["status"] == "pending_review"
    # The earlier event keeps its own record; a plain draft save outside rework records none.
    reworks = [e for e in last["timeline"] if e["type"] == "rework_submitted"]
    assert [list(e["data"]["changes"]) for e in reworks] == [["title"], ["summary"]]
    saved = patch(client, agent_headers, task, {"title": "再改一次"})
    assert "changes" not in saved["timeline"][-1]["data"]


def test_a_value_patched_unchanged_is_no_change(client, admin_client, agent_headers, article):
    task, cover = article
    reject(admin_client, task, article_selections(task, cover), [], rejectionNote="whole task")
    done = patch(client, agent_headers, task, {"title": task["candidates"]["titles"][0], "author": "新作者"})
    assert last_rework(done)["data"]["changes"] == {"author": {"before": "硅基君", "after": "新作者"}}


def test_image_changes_record_the_references_before_and_after(app, client, admin_client, agent_headers, post):
    task, images = post
    selections = image_post_selections(images)
    reject(admin_client, task, selections, ["images", "coverCrop"])
    new = make_asset(app, 900, 1200, scope="library")
    refs = [{"assetId": new["assetId"]}, {"assetId": images[1]["assetId"]}]
    patch(client, agent_headers, task, {"images": refs})
    done = patch(client, agent_headers, task, {"coverCrop": full_crop(new)})
    events = [e for e in done["timeline"] if e["type"] == "rework_submitted"]
    assert events[0]["data"]["changes"] == {"images": {"before": selections["images"], "after": refs}}
    assert events[1]["data"]["changes"] == {"coverCrop": {"before": selections["coverCrop"], "after": full_crop(new)}}
    # The page shows both sides as thumbnails of the stored assets.
    html = section(page(admin_client, task), "rework-changes")
    before, after = re.split(r'data-side="after"', html.split('data-change="images"')[1].split("</dd>")[0])
    assert images[0]["url"] in before and new["url"] not in before
    assert new["url"] in after and images[1]["url"] in after
    assert 'class="change-crop" style="left: 0.0%; top: 0.0%; width: 100.0%; height: 100.0%"' in html


def test_the_page_shows_title_and_summary_as_character_level_del_and_ins(client, admin_client, agent_headers, article):
    task, _selections = rejected_article(client, admin_client, agent_headers, article)
    patch(client, agent_headers, task, {"title": "芯片的明天在哪儿"})
    patch(client, agent_headers, task, {"summary": "一篇讲芯片散热的短文"})
    html = section(page(admin_client, task), "rework-changes")
    title = html.split('data-change="title"')[1].split("</dd>")[0]
    summary = html.split('data-change="summary"')[1].split("</dd>")[0]
    # Chinese by character: the kept characters stay plain text between the marks.
    assert re.sub(r"\s+", "", title) == (
        '><pclass="diff">芯片的<del>未来</del><ins>明天</ins>在哪<del>里</del><ins>儿</ins></p>'
    )
    assert "一篇<del>关于</del><ins>讲</ins>芯片<ins>散热</ins>的短文" in summary
    assert 'data-change="body"' not in html  # only what the agent changed


def test_content_is_escaped_never_markup(client, admin_client, agent_headers, article):
    task, _selections = rejected_article(client, admin_client, agent_headers, article, rejected=["title"])
    patch(client, agent_headers, task, {"title": "芯片<script>alert(1)</script>"})
    html = section(page(admin_client, task), "rework-changes")
    assert "<script>" not in html
    assert "<ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins>" in html


def test_earlier_rounds_open_from_their_rework_events_in_the_timeline(client, admin_client, agent_headers, article):
    task, selections = rejected_article(client, admin_client, agent_headers, article, rejected=["title"])
    back = patch(client, agent_headers, task, {"title": "第一轮标题"})
    reject(admin_client, task, back["selections"], ["title"])
    patch(client, agent_headers, task, {"title": "第二轮标题"})
    html = page(admin_client, task)
    current = section(html, "rework-changes")
    assert "<del>一</del><ins>二</ins>" in current and "芯片的未来" not in current  # this round only
    timeline = html.split('id="timeline-heading"')[1].split("</ol>")[0]
    opened = re.findall(r'<details class="event-changes">.*?</details>', timeline, re.S)
    assert len(opened) == 2  # newest first: the second round, then the first
    assert "<del>一</del><ins>二</ins>" in opened[0]
    assert "<del>芯片的未来在哪里</del><ins>第一轮标题</ins>" in re.sub(r"\s+", "", opened[1])
    assert '"before"' not in timeline  # the record itself is not dumped into the timeline


def test_no_rework_no_changes_section(admin_client, agent_headers, article):
    task, _cover = article
    assert 'data-role="rework-changes"' not in page(admin_client, task)


def test_long_texts_keep_context_around_each_change():
    before = "甲" * 500 + "乙" + "丙" * 500
    pieces = changes._elide(changes.segments(before, before.replace("乙", "丁")))
    assert [op for op, _text in pieces] == ["…", "=", "-", "+", "=", "…"]
    assert pieces[2:4] == [("-", "乙"), ("+", "丁")]
    assert len(pieces[1][1]) == len(pieces[4][1]) == changes.CONTEXT


def test_stored_diff_is_used_and_a_diff_that_does_not_fit_is_computed_again():
    recorded = changes.record({"title": "abc"}, {"title": "abd"})
    assert recorded["textDiff"] == {"title": [["=", 2], ["-", 1], ["+", 1]]}
    assert changes.segments("abc", "abd", [["-", 3], ["+", 3]]) == [("-", "abc"), ("+", "abd")]  # fits: used
    assert changes.segments("abc", "abd", [["=", 9]]) == [("=", "ab"), ("-", "c"), ("+", "d")]


def test_a_body_diff_is_by_line_then_by_character():
    before = "# 标题\n\n第一段文字。\n\n第二段。\n"
    after = "# 标题\n\n第一段新文字。\n\n第二段。\n\n第三段。\n"
    pieces = changes.segments(before, after)
    assert pieces == [("=", "# 标题\n\n第一段"), ("+", "新"), ("=", "文字。\n\n第二段。\n"), ("+", "\n第三段。\n")]
    huge = "字" * 3000
    assert changes.text_ops(huge, "另" * 3000) == [["-", 3000], ["+", 3000]]  # past the budget: whole


def test_image_post_whole_task_rework_shows_comment_settings_in_words(app, client, admin_client, agent_headers):
    images = [make_asset(app, 600, 800) for _ in range(2)]
    task = create_task(client, agent_headers, image_post_payload(images))
    reject(admin_client, task, image_post_selections(images), [])
    patch(client, agent_headers, task, {"commentSettings": {"needOpenComment": False, "onlyFansCanComment": True}})
    html = section(page(admin_client, task), "rework-changes")
    item = html.split('data-change="commentSettings"')[1].split("</dd>")[0]
    assert "<del>Open comments: yes; Only followers can comment: no</del>" in item
    assert "<ins>Open comments: no; Only followers can comment: yes</ins>" in item
